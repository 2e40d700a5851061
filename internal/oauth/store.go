package oauth

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
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
var sealMagic = []byte("SBOAUTH1")

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

	mu    sync.Mutex
	key   cipher.AEAD
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

// aead returns the cipher, creating the key file on first use. The caller
// holds s.mu.
func (s *store) aead() (cipher.AEAD, error) {
	if s.key != nil {
		return s.key, nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", s.dir, err)
	}
	path := filepath.Join(s.dir, keyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err = createKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key of the sign-in store: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("the key file %s has %d bytes, want 32: move it away and sign in again", path, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s.key = gcm
	return gcm, nil
}

// createKey writes a new random key to path unless another process wrote
// one first, and returns the key now at path.
func createKey(path string) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := writeTemp(filepath.Dir(path), key)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	// Link fails if the key exists: then the other process's key wins.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return os.ReadFile(path)
}

// writeTemp writes data to a new file of mode 0600 in dir, synced, and
// returns its name; the caller links or renames it into place.
func writeTemp(dir string, data []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
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
	plain, err := open(gcm, data, filepath.Base(path))
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
	sealed, err := seal(gcm, plain, filepath.Base(path))
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := writeTemp(dir, sealed)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
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

// seal encrypts plain; the file's name is the additional data, so a sealed
// record copied over another's file does not open.
func seal(gcm cipher.AEAD, plain []byte, name string) ([]byte, error) {
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte(nil), sealMagic...)
	out = append(out, nonce...)
	return gcm.Seal(out, nonce, plain, []byte(name)), nil
}

func open(gcm cipher.AEAD, data []byte, name string) ([]byte, error) {
	if !bytes.HasPrefix(data, sealMagic) || len(data) < len(sealMagic)+gcm.NonceSize() {
		return nil, errors.New("not a sealed sign-in record")
	}
	data = data[len(sealMagic):]
	nonce, box := data[:gcm.NonceSize()], data[gcm.NonceSize():]
	plain, err := gcm.Open(nil, nonce, box, []byte(name))
	if err != nil {
		return nil, errors.New("the record does not decrypt with the store's key (the key file was replaced, or the record was altered)")
	}
	return plain, nil
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
