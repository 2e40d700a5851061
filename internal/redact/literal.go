package redact

import "strings"

// commonBytes lists bytes from the most to the least frequent in typical
// tool output (code, JSON, logs, prose); bytes not listed are rarer still.
// Measured on Go's net/http, encoding/json and crypto/tls sources, docs and
// test scripts.
const commonBytes = " etronisa\n\tlcd.upgmhf/\",)(y=v:b-{}1wSCTx0k2'ERAH_POq><L\\I[]NFD!M3*G465#BWU8%&9$K;7`zVj+|^X@JQYZ?~"

// byteRank is how common a byte is: 0 for the rarest.
var byteRank = func() (rank [256]uint8) {
	for i := 0; i < len(commonBytes); i++ {
		rank[commonBytes[i]] = uint8(len(commonBytes) - i)
	}
	return rank
}()

// literal searches text for a fixed string. Rather than scanning for its
// first byte, as strings.Index does, it scans for its rarest byte: the
// vectorised strings.IndexByte then stops seldom, and a search costs little
// more than one pass over memory.
type literal struct {
	s    string
	rare int // index in s of its rarest byte
}

func newLiteral(s string) literal {
	l := literal{s: s}
	for i := 1; i < len(s); i++ {
		if byteRank[s[i]] < byteRank[s[l.rare]] {
			l.rare = i
		}
	}
	return l
}

// each calls fn with the index of every occurrence of the literal in text,
// overlapping ones included.
func (l literal) each(text string, fn func(i int)) {
	n, off, c := len(l.s), l.rare, l.s[l.rare]
	misses := 0
	for i := 0; i+n <= len(text); {
		j := strings.IndexByte(text[i+off:len(text)-n+off+1], c)
		if j < 0 {
			return
		}
		pos := i + j
		if text[pos:pos+n] == l.s {
			fn(pos)
		} else if misses++; misses > 64 && misses > pos>>6 {
			// The rare byte is not rare in this text: leave it to
			// strings.Index, which adapts.
			for i = pos + 1; ; {
				k := strings.Index(text[i:], l.s)
				if k < 0 {
					return
				}
				fn(i + k)
				i += k + 1
			}
		}
		i = pos + 1
	}
}
