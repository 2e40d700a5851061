package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/sealed"
)

// Layout of the store, under the state directory.
const (
	storeDir   = "oauth"   // 0700
	keyFile    = "key"     // 32 random bytes, 0600
	grantsDir  = "grants"  // one sealed file per server (and user)
	clientsDir = "clients" // one sealed file per authorization server
	lockExt    = ".lock"
	grantExt   = ".grant"
	clientExt  = ".client"
)

// sealMagic starts every sealed file, so that a file of another kind or
// version is told apart from one that does not decrypt.
const sealMagic = "SBOAUTH1"

// secret is a string that never prints: fmt and %v show a marker. It is
// marshalled to JSON as itself, because the only JSON it goes into is the
// plaintext that is sealed before it touches the disk.
type secret string

// String hides the value.
func (s secret) String() string {
	if s == "" {
		return ""
	}
	return "[REDACTED]"
}

// GoString hides the value from %#v.
func (s secret) GoString() string { return s.String() }

// grant is what is stored for one server (and user): where its tokens come
// from and the tokens themselves.
type grant struct {
	Server string `json:"server"`
	User   string `json:"user,omitempty"`

	// ServerURL is the MCP endpoint the grant was obtained for: its tokens
	// are sent nowhere else.
	ServerURL string `json:"server_url"`
	// Kind is GrantAuthorizationCode or GrantClientCredentials.
	Kind               Grant  `json:"grant"`
	Resource           string `json:"resource"`
	Issuer             string `json:"issuer"`
	TokenEndpoint      string `json:"token_endpoint"`
	RevocationEndpoint string `json:"revocation_endpoint,omitempty"`
	ClientID           string `json:"client_id"`
	// Registration says where ClientID came from (see Registration*).
	Registration string `json:"registration"`
	// AuthMethod is the token endpoint auth method used for this client.
	AuthMethod string `json:"auth_method"`

	AccessToken  secret    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken secret    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
	// WantScopes are scopes a server asked for in a step-up challenge that
	// could not be granted without a person; the next sign-in asks for them.
	WantScopes []string `json:"want_scopes,omitempty"`
	Subject    string   `json:"subject,omitempty"`

	SignedInAt  time.Time `json:"signed_in_at,omitzero"`
	RefreshedAt time.Time `json:"refreshed_at,omitzero"`
	// Problem says why the stored grant no longer works (a refused refresh
	// token, a revoked registration); empty while it does.
	Problem string `json:"problem,omitempty"`
}

// registration is a client registered with one authorization server
// (dynamically), stored so that it is reused and never repeated per call.
type registration struct {
	Issuer       string    `json:"issuer"`
	ClientID     string    `json:"client_id"`
	ClientSecret secret    `json:"client_secret,omitempty"`
	AuthMethod   string    `json:"auth_method"`
	RedirectURIs []string  `json:"redirect_uris"`
	RegisteredAt time.Time `json:"registered_at"`
	// SecretExpiresAt is when the AS said the secret expires; zero is never.
	SecretExpiresAt time.Time `json:"client_secret_expires_at,omitzero"`
}

// store keeps grants and registrations, sealed, in dir. It caches what it
// read by file size and modification time, so a process sees another's
// writes (a login from the CLI while the daemon runs) at its next read.
type store struct {
	dir string
	// saved, if set, is called after a grant was stored (Options.OnStore).
	saved func()

	mu    sync.Mutex
	key   *sealed.Key
	cache map[string]cachedFile
}

type cachedFile struct {
	mod     time.Time
	size    int64
	plain   []byte
	checked time.Time // when the file was last stat'ed
	grant   *grant    // plain decoded, for grant files
}

// revalidate is how long a cached record is used without looking at its
// file again: another process's sign-in shows within this time, and a
// request pays no system call in between. Refreshes always look.
const revalidate = time.Second

func newStore(stateDir string) *store {
	return &store{dir: filepath.Join(stateDir, storeDir), cache: make(map[string]cachedFile)}
}

// nameFor returns the file name of a record: a hash, so that any server,
// user or issuer name makes a safe file name and the directory lists no
// identities in clear.
func nameFor(kind string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (s *store) grantPath(server, user string) string {
	return filepath.Join(s.dir, grantsDir, nameFor("grant", server, user)+grantExt)
}

func (s *store) clientPath(issuer string) string {
	return filepath.Join(s.dir, clientsDir, nameFor("client", canonicalIssuer(issuer))+clientExt)
}

// aead returns the key, creating the key file on first use. The caller
// holds s.mu.
func (s *store) aead() (*sealed.Key, error) {
	if s.key != nil {
		return s.key, nil
	}
	key, err := sealed.LoadKey(filepath.Join(s.dir, keyFile))
	if err != nil {
		return nil, fmt.Errorf("the key of the sign-in store: %w", err)
	}
	s.key = key
	return key, nil
}

// read returns the opened contents of path, or nil if there is no file.
// Unless fresh, a record checked less than revalidate ago is not stat'ed.
func (s *store) read(path string, fresh bool) ([]byte, error) {
	c, err := s.readCached(path, fresh)
	return c.plain, err
}

func (s *store) readCached(path string, fresh bool) (cachedFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if c, ok := s.cache[path]; ok && !fresh && now.Sub(c.checked) < revalidate {
		return c, nil
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		delete(s.cache, path)
		return cachedFile{}, nil
	}
	if err != nil {
		return cachedFile{}, err
	}
	if c, ok := s.cache[path]; ok && c.mod.Equal(info.ModTime()) && c.size == info.Size() {
		c.checked = now
		s.cache[path] = c
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cachedFile{}, nil
	}
	if err != nil {
		return cachedFile{}, err
	}
	gcm, err := s.aead()
	if err != nil {
		return cachedFile{}, err
	}
	plain, err := gcm.Open(sealMagic, data, filepath.Base(path))
	if err != nil {
		return cachedFile{}, fmt.Errorf("%s: %w", path, err)
	}
	c := cachedFile{mod: info.ModTime(), size: info.Size(), plain: plain, checked: now}
	if strings.HasSuffix(path, grantExt) {
		var g grant
		if err := json.Unmarshal(plain, &g); err != nil {
			return cachedFile{}, fmt.Errorf("decoding the stored sign-in in %s: %w", path, err)
		}
		c.grant = &g
	}
	s.cache[path] = c
	return c, nil
}

// write seals plain into path atomically, mode 0600.
func (s *store) write(path string, plain []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	gcm, err := s.aead()
	if err != nil {
		return err
	}
	data, err := gcm.Seal(sealMagic, plain, filepath.Base(path))
	if err != nil {
		return err
	}
	if err := sealed.WriteFile(path, data); err != nil {
		return err
	}
	delete(s.cache, path)
	return nil
}

func (s *store) remove(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cache, path)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// loadGrant returns a copy of the stored grant of server and user, or nil.
// fresh looks at the file whatever the cache says.
func (s *store) loadGrant(server, user string, fresh bool) (*grant, error) {
	return s.loadGrantAt(s.grantPath(server, user), fresh)
}

// loadGrantAt is loadGrant for a path from grantPath.
func (s *store) loadGrantAt(path string, fresh bool) (*grant, error) {
	c, err := s.readCached(path, fresh)
	if err != nil || c.grant == nil {
		return nil, err
	}
	g := *c.grant
	return &g, nil
}

func (s *store) saveGrant(g *grant) error {
	plain, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if err := s.write(s.grantPath(g.Server, g.User), plain); err != nil {
		return fmt.Errorf("storing the sign-in of %s: %w", g.Server, err)
	}
	if s.saved != nil {
		s.saved()
	}
	return nil
}

func (s *store) deleteGrant(server, user string) error {
	return s.remove(s.grantPath(server, user))
}

// grants returns every stored grant, in no particular order. A file that
// does not open is reported, not skipped.
func (s *store) grants() ([]*grant, error) {
	dir := filepath.Join(s.dir, grantsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*grant
	var errs []error
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), grantExt) {
			continue
		}
		c, err := s.readCached(filepath.Join(dir, e.Name()), true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.grant != nil {
			g := *c.grant
			out = append(out, &g)
		}
	}
	return out, errors.Join(errs...)
}

func (s *store) loadRegistration(issuer string) (*registration, error) {
	plain, err := s.read(s.clientPath(issuer), true)
	if err != nil || plain == nil {
		return nil, err
	}
	var r registration
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, fmt.Errorf("decoding the stored registration with %s: %w", issuer, err)
	}
	return &r, nil
}

func (s *store) saveRegistration(r *registration) error {
	plain, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := s.write(s.clientPath(r.Issuer), plain); err != nil {
		return fmt.Errorf("storing the registration with %s: %w", r.Issuer, err)
	}
	return nil
}

func (s *store) deleteRegistration(issuer string) error {
	return s.remove(s.clientPath(issuer))
}

// lockGrant takes the cross-process lock of a grant, held while it is
// refreshed, so that two processes never spend the same refresh token.
func (s *store) lockGrant(server, user string) (unlock func(), err error) {
	dir := filepath.Join(s.dir, grantsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return lockFile(filepath.Join(dir, nameFor("grant", server, user)+lockExt))
}

// canonicalIssuer compares issuers as RFC 8414 §3.3 allows: ignoring one
// trailing slash.
func canonicalIssuer(issuer string) string {
	return strings.TrimSuffix(issuer, "/")
}
