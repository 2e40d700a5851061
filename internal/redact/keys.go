package redact

import "strings"

// credentialWords are key segments that name a credential on their own.
var credentialWords = map[string]bool{
	"password": true, "passwords": true, "passwd": true, "passphrase": true,
	"secret": true, "secrets": true,
	"token": true,
	"auth":  true, "authorization": true,
	"cookie": true, "cookies": true,
	"session": true, "sessionid": true,
	"credential": true, "credentials": true,
	"apikey": true, "apikeys": true, "accesskey": true, "privatekey": true,
	"secretkey": true, "authkey": true,
}

// credentialSuffixes name a credential at the end of a segment written
// without separators: dbpassword, authtoken, clientsecret, xapikey.
var credentialSuffixes = []string{
	"password", "passwd", "token", "secret", "apikey", "accesskey",
	"privatekey", "secretkey", "credentials", "credential",
}

// keyQualifiers turn the segment after them into a credential when that
// segment is "key" or "keys": api_key, access_key, private_key, secret_key.
var keyQualifiers = map[string]bool{
	"api": true, "access": true, "private": true, "secret": true,
	"signing": true, "encryption": true, "master": true,
}

// harmlessAfter are segments that, anywhere after the credential word, make
// the key describe a credential rather than hold one: token_count,
// auth_type, secret_name, token_url, access_token_expires_in.
var harmlessAfter = map[string]bool{
	"count": true, "counts": true, "used": true, "usage": true,
	"limit": true, "limits": true, "max": true, "min": true, "total": true,
	"num": true, "number": true, "length": true, "len": true, "size": true,
	"budget": true, "estimate": true, "rate": true,
	"type": true, "types": true, "kind": true, "format": true, "version": true,
	"name": true, "names": true, "label": true, "description": true,
	"ref": true, "arn": true, "hint": true, "field": true, "fields": true,
	"path": true, "file": true, "files": true, "dir": true, "location": true,
	"env": true, "var": true, "vars": true, "source": true,
	"url": true, "uri": true, "urls": true, "endpoint": true, "endpoints": true,
	"method": true, "methods": true, "scheme": true, "schemes": true,
	"policy": true, "policies": true, "provider": true, "providers": true,
	"mode": true, "enabled": true, "disabled": true, "required": true, "optional": true,
	"status": true, "error": true, "errors": true, "message": true,
	"expires": true, "expiry": true, "expiration": true, "expired": true,
	"ttl": true, "timeout": true, "duration": true, "lifetime": true,
	"created": true, "updated": true,
	"header": true, "headers": true,
	"index": true, "logprob": true, "logprobs": true,
}

// harmlessBefore are segments that, just before the credential word, make
// it something else: pagination cursors (next_token, pageToken), counts
// (max_token) and a tokenizer's special tokens (eos_token).
var harmlessBefore = map[string]bool{
	"max": true, "min": true, "num": true, "total": true,
	"page": true, "next": true, "prev": true, "previous": true,
	"continuation": true, "cursor": true, "sync": true, "resume": true, "pagination": true,
	"bos": true, "eos": true, "pad": true, "unk": true, "sep": true,
	"cls": true, "mask": true, "special": true,
}

// maxKeyLen is the longest key considered; longer ones are not names.
const maxKeyLen = 128

// isCredentialKey reports whether an object key or assignment name looks
// like it holds a credential: password, passwd, secret, token, api_key or
// apikey, access_key, private_key, authorization, auth, cookie, session,
// session_id, credential(s) and similar, as whole words in any case, with _,
// -, ., spaces and camelCase as word breaks. Names that only contain such a
// word (author, tokens_used, max_tokens) or that describe a credential
// rather than hold one (token_count, auth_type, secret_name,
// nextPageToken) are not credential keys.
func isCredentialKey(key string) bool {
	if len(key) > maxKeyLen || !hasStem(key) {
		return false
	}
	var buf [16]string
	segs := splitKey(key, buf[:0])
	for i, s := range segs {
		hit := credentialWords[s]
		if !hit && (s == "key" || s == "keys") && i > 0 && keyQualifiers[segs[i-1]] {
			hit = true
		}
		if !hit {
			for _, suf := range credentialSuffixes {
				if len(s) > len(suf) && strings.HasSuffix(s, suf) {
					hit = true
					break
				}
			}
		}
		if !hit {
			continue
		}
		if i > 0 && harmlessBefore[segs[i-1]] {
			continue
		}
		for _, after := range segs[i+1:] {
			if harmlessAfter[after] {
				return false
			}
		}
		return true
	}
	return false
}

// hasStem reports whether key contains, in any case, a word that every
// credential key contains. It is the cheap test run on every candidate key.
func hasStem(key string) bool {
	for i := 0; i+3 <= len(key); i++ {
		rest := key[i:]
		switch key[i] | 0x20 {
		case 'p':
			if hasPrefixFold(rest, "pass") {
				return true
			}
		case 's':
			if hasPrefixFold(rest, "secret") || hasPrefixFold(rest, "session") {
				return true
			}
		case 't':
			if hasPrefixFold(rest, "token") {
				return true
			}
		case 'k':
			if hasPrefixFold(rest, "key") {
				return true
			}
		case 'a':
			if hasPrefixFold(rest, "auth") {
				return true
			}
		case 'c':
			if hasPrefixFold(rest, "cookie") || hasPrefixFold(rest, "credential") {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold is strings.HasPrefix for an ASCII lower-case prefix,
// ignoring the case of s.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if s[i]|0x20 != prefix[i] {
			return false
		}
	}
	return true
}

// splitKey splits a key into lower-case words at every byte that is not an
// ASCII letter or digit, and at camelCase boundaries: "xApiKey",
// "X-API-Key" and "APIKey" all give [x api key] or [api key].
func splitKey(key string, segs []string) []string {
	isUpper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	start := -1
	for i := 0; i <= len(key); i++ {
		if i == len(key) || !(isUpper(key[i]) || isLower(key[i]) || isDigit(key[i])) {
			if start >= 0 {
				segs = append(segs, strings.ToLower(key[start:i]))
				start = -1
			}
			continue
		}
		if start >= 0 && isUpper(key[i]) {
			prev := key[i-1]
			next := byte(0)
			if i+1 < len(key) {
				next = key[i+1]
			}
			// fooBar, foo2Bar | APIKey
			if isLower(prev) || isDigit(prev) || (isUpper(prev) && isLower(next)) {
				segs = append(segs, strings.ToLower(key[start:i]))
				start = i
			}
		}
		if start < 0 {
			start = i
		}
	}
	return segs
}
