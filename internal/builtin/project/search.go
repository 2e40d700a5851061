package project

import (
	"bytes"
	"cmp"
	"math"
	"path"
	"slices"
	"strings"
	"time"
)

// Passage windows: passageLines lines, a new window every passageStep lines,
// so neighbouring windows overlap by passageLines-passageStep lines.
const (
	passageLines = 30
	passageStep  = 20
)

// BM25 parameters and the boosts for symbol and path matches, as multiples
// of the term's inverse document frequency.
const (
	bm25K1          = 1.2
	bm25B           = 0.75
	boostSymbolName = 3.0 // the query names a symbol (whole, or every word of it)
	boostSymbolPart = 1.0 // the term is one word of a symbol's name
	boostPath       = 1.5 // the term is a word of the file's path
	maxPerFile      = 2   // passages per file in one result
	maxTermLen      = 64  // longer "words" (base64, hashes) are not indexed
)

// fileDoc is the analysis of one indexed file. It is immutable once made.
type fileDoc struct {
	path      string // root-relative, slash-separated
	size      int64
	modTime   time.Time
	binary    bool
	lines     int
	symbols   []symbol
	passages  []passageDoc
	pathTerms []uint32
}

// symbol is a definition found by the language-aware patterns.
type symbol struct {
	name  string
	line  int      // 1-based
	whole uint32   // the lower-case name's term id
	parts []uint32 // the term ids of its words, when it has several
}

// passageDoc is one window of lines and the words in it.
type passageDoc struct {
	start, end int // 1-based, inclusive
	length     int // words
	terms      []termCount
}

// termCount is a word and how often it occurs in a passage.
type termCount struct {
	id uint32
	n  uint16
}

// analyser turns file contents into fileDocs. It is used by one goroutine
// at a time.
type analyser struct {
	dict   *termDict
	buf    []byte
	counts map[uint32]uint16
}

func newAnalyser(dict *termDict) *analyser {
	return &analyser{dict: dict, counts: map[uint32]uint16{}}
}

// ids returns the term ids of s.
func (a *analyser) ids(dst []uint32, s string) []uint32 {
	a.buf = eachTerm(s, a.buf, func(t []byte) { dst = append(dst, a.dict.id(t)) })
	return dst
}

// analyseText fills doc's lines, symbols, passages and path words from its
// content.
func (a *analyser) analyseText(doc *fileDoc, data []byte) {
	lines := splitLines(data)
	doc.lines = len(lines)
	doc.symbols = findSymbols(path.Ext(doc.path), lines)
	for i := range doc.symbols {
		sym := &doc.symbols[i]
		ids := a.ids(nil, sym.name)
		if len(ids) == 0 {
			sym.whole = math.MaxUint32
			continue
		}
		sym.whole = ids[0]
		if len(ids) > 2 {
			sym.parts = slices.Compact(ids[1:])
		}
	}
	for _, t := range a.ids(nil, strings.NewReplacer("/", " ", ".", " ", "-", " ").Replace(strings.TrimSuffix(doc.path, path.Ext(doc.path)))) {
		if !slices.Contains(doc.pathTerms, t) {
			doc.pathTerms = append(doc.pathTerms, t)
		}
	}
	perLine := make([][]uint32, len(lines))
	for i, l := range lines {
		perLine[i] = a.ids(nil, l)
	}
	for start := 0; ; start += passageStep {
		end := min(start+passageLines, len(lines))
		clear(a.counts)
		n := 0
		for _, ts := range perLine[start:end] {
			for _, t := range ts {
				if a.counts[t] < math.MaxUint16 {
					a.counts[t]++
				}
				n++
			}
		}
		p := passageDoc{start: start + 1, end: max(end, start+1), length: n, terms: make([]termCount, 0, len(a.counts))}
		for t, c := range a.counts {
			p.terms = append(p.terms, termCount{id: t, n: c})
		}
		doc.passages = append(doc.passages, p)
		if end >= len(lines) {
			break
		}
	}
}

// posting is one passage containing a term.
type posting struct {
	passage int32
	tf      uint16
}

// passageRef locates a passage in a snapshot.
type passageRef struct {
	file  int32
	index int32 // into files[file].passages
}

// symbolRef locates a symbol in a snapshot.
type symbolRef struct {
	file, sym int32
}

// snapshot is an immutable inverted index over a set of files. Its tables
// are indexed by term id; ids the dictionary gained later are absent.
type snapshot struct {
	dict         *termDict
	files        []*fileDoc
	firstPassage []int32 // per file, its first passage's id
	passages     []passageRef
	postings     [][]posting
	symbolNames  [][]symbolRef          // by the id of a symbol's whole name
	symbolParts  map[uint32][]symbolRef // by the ids of the words of compound names
	pathIndex    map[uint32][]int32     // path word → files
	avgLen       float64
}

// newSnapshot indexes docs, whose term ids come from dict.
func newSnapshot(dict *termDict, docs []*fileDoc) *snapshot {
	n := dict.size()
	s := &snapshot{
		dict:         dict,
		files:        docs,
		firstPassage: make([]int32, len(docs)),
		postings:     make([][]posting, n),
		symbolNames:  make([][]symbolRef, n),
		symbolParts:  map[uint32][]symbolRef{},
		pathIndex:    map[uint32][]int32{},
	}
	// Size the posting lists first: one allocation each.
	df := make([]int32, n)
	passages := 0
	for _, d := range docs {
		passages += len(d.passages)
		for _, p := range d.passages {
			for _, tc := range p.terms {
				df[tc.id]++
			}
		}
	}
	for id, c := range df {
		if c > 0 {
			s.postings[id] = make([]posting, 0, c)
		}
	}
	s.passages = make([]passageRef, 0, passages)
	total := 0
	for fi, d := range docs {
		s.firstPassage[fi] = int32(len(s.passages))
		for pi, p := range d.passages {
			id := int32(len(s.passages))
			s.passages = append(s.passages, passageRef{file: int32(fi), index: int32(pi)})
			total += p.length
			for _, tc := range p.terms {
				s.postings[tc.id] = append(s.postings[tc.id], posting{passage: id, tf: tc.n})
			}
		}
		for si, sym := range d.symbols {
			if int(sym.whole) >= n {
				continue
			}
			ref := symbolRef{file: int32(fi), sym: int32(si)}
			s.symbolNames[sym.whole] = append(s.symbolNames[sym.whole], ref)
			for _, p := range sym.parts {
				s.symbolParts[p] = append(s.symbolParts[p], ref)
			}
		}
		for _, t := range d.pathTerms {
			s.pathIndex[t] = append(s.pathIndex[t], int32(fi))
		}
	}
	if len(s.passages) > 0 {
		s.avgLen = float64(total) / float64(len(s.passages))
	}
	return s
}

// hit is one ranked passage.
type hit struct {
	file    *fileDoc
	passage *passageDoc
	score   float64
	symbols []string // symbols defined in the passage that the query names, best first
}

// search ranks passages for terms by BM25 plus symbol and path boosts and
// returns at most limit of them, best first, at most maxPerFile per file
// and without overlapping windows. allow, when non-nil, filters files;
// inScope is how many files it let through.
func (s *snapshot) search(terms []string, allow func(path string) bool, limit int) (hits []hit, inScope int) {
	allowed := make([]bool, len(s.files))
	for i, f := range s.files {
		allowed[i] = allow == nil || allow(f.path)
		if allowed[i] {
			inScope++
		}
	}
	// The query's term ids, and the stop words, which count as present in
	// a compound name ("addItemToCart" for "add item to cart").
	q := map[uint32]float64{} // id → idf
	covered := map[uint32]bool{}
	n := float64(len(s.passages))
	for _, t := range terms {
		if id, ok := s.dict.lookup(t); ok && int(id) < len(s.postings) {
			df := float64(len(s.postings[id]))
			q[id] = math.Log(1 + (n-df+0.5)/(df+0.5))
			covered[id] = true
		}
	}
	for w := range stopWords {
		if id, ok := s.dict.lookup(w); ok {
			covered[id] = true
		}
	}
	if len(q) == 0 || len(s.passages) == 0 {
		return nil, inScope
	}
	scores := make([]float64, len(s.passages))
	var touched []int32
	add := func(p int32, v float64) {
		if scores[p] == 0 {
			touched = append(touched, p)
		}
		scores[p] += v
	}
	// namesSymbol reports whether the query spells out every word of sym.
	namesSymbol := func(sym *symbol) bool {
		for _, p := range sym.parts {
			if !covered[p] {
				return false
			}
		}
		return len(sym.parts) > 0
	}
	for id, idf := range q {
		for _, p := range s.postings[id] {
			ref := s.passages[p.passage]
			if !allowed[ref.file] {
				continue
			}
			length := float64(s.files[ref.file].passages[ref.index].length)
			tf := float64(p.tf)
			add(p.passage, idf*tf*(bm25K1+1)/(tf+bm25K1*(1-bm25B+bm25B*length/max(s.avgLen, 1))))
		}
		for _, r := range s.symbolNames[id] {
			if allowed[r.file] {
				s.addAt(r, boostSymbolName*idf, add)
			}
		}
		for _, r := range s.symbolParts[id] {
			if !allowed[r.file] {
				continue
			}
			sym := &s.files[r.file].symbols[r.sym]
			v := boostSymbolPart * idf
			if namesSymbol(sym) {
				v += boostSymbolName * idf / float64(len(sym.parts))
			}
			s.addAt(r, v, add)
		}
		for _, fi := range s.pathIndex[id] {
			if !allowed[fi] {
				continue
			}
			first := s.firstPassage[fi]
			add(first, boostPath*idf)
			for p := first + 1; p < first+int32(len(s.files[fi].passages)); p++ {
				if scores[p] > 0 {
					add(p, boostPath*idf/2)
				}
			}
		}
	}
	// Only the best few need sorting: keep a generous head, enough for the
	// per-file limits, and sort everything only when the head runs dry.
	order := func(a, b int32) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	head := touched
	if k := limit * 8; len(touched) > k {
		head = topK(touched, k, order)
	}
	slices.SortFunc(head, order)
	hits = s.pick(head, scores, limit)
	if len(hits) < limit && len(head) < len(touched) {
		slices.SortFunc(touched, order)
		hits = s.pick(touched, scores, limit)
	}
	for i := range hits {
		hits[i].symbols = namedSymbols(hits[i], q, namesSymbol)
	}
	return hits, inScope
}

// addAt adds v to the passages that contain symbol r's definition.
func (s *snapshot) addAt(r symbolRef, v float64, add func(int32, float64)) {
	line := s.files[r.file].symbols[r.sym].line
	first := s.firstPassage[r.file]
	for i, p := range s.files[r.file].passages {
		if p.start > line {
			break
		}
		if line <= p.end {
			add(first+int32(i), v)
		}
	}
}

// pick takes up to limit passages from ids (best first), at most maxPerFile
// per file and none overlapping another of its file.
func (s *snapshot) pick(ids []int32, scores []float64, limit int) []hit {
	var hits []hit
	perFile := map[int32][]*passageDoc{}
	for _, id := range ids {
		if len(hits) == limit {
			break
		}
		ref := s.passages[id]
		f := s.files[ref.file]
		p := &f.passages[ref.index]
		taken := perFile[ref.file]
		if len(taken) >= maxPerFile || slices.ContainsFunc(taken, func(q *passageDoc) bool { return q.start <= p.end && p.start <= q.end }) {
			continue
		}
		perFile[ref.file] = append(taken, p)
		hits = append(hits, hit{file: f, passage: p, score: scores[id]})
	}
	return hits
}

// topK returns the k best of ids by order (unsorted), using a partial
// quickselect on a copy.
func topK(ids []int32, k int, order func(a, b int32) int) []int32 {
	a := slices.Clone(ids)
	lo, hi := 0, len(a)-1
	for lo < hi {
		pivot := a[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for order(a[i], pivot) < 0 {
				i++
			}
			for order(a[j], pivot) > 0 {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			lo = hi
		}
	}
	return a[:k]
}

// namedSymbols returns the symbols defined in h's passage that the query
// names, wholly or by every word, or else by some word; best first.
func namedSymbols(h hit, q map[uint32]float64, namesSymbol func(*symbol) bool) []string {
	weight := map[string]float64{}
	for i := range h.file.symbols {
		sym := &h.file.symbols[i]
		if sym.line < h.passage.start || sym.line > h.passage.end {
			continue
		}
		w := 0.0
		if idf, ok := q[sym.whole]; ok {
			w += boostSymbolName * idf
		}
		for _, p := range sym.parts {
			w += boostSymbolPart * q[p]
		}
		if namesSymbol(sym) {
			w += boostSymbolName
		}
		if w > 0 {
			weight[sym.name] = max(weight[sym.name], w)
		}
	}
	names := make([]string, 0, len(weight))
	for name := range weight {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(weight[b], weight[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return names
}

// bestLine picks the line of a passage to cite: the definition of the best
// matched symbol, else the line with the most query words.
func bestLine(h hit, lines []string, terms []string) int {
	for _, name := range h.symbols {
		for _, sym := range h.file.symbols {
			if sym.name == name && sym.line >= h.passage.start && sym.line <= h.passage.end {
				return sym.line
			}
		}
	}
	best, bestN := h.passage.start, 0
	for ln := h.passage.start; ln <= h.passage.end && ln <= len(lines); ln++ {
		n := 0
		for _, t := range appendTerms(nil, lines[ln-1]) {
			if slices.Contains(terms, t) {
				n++
			}
		}
		if n > bestN {
			best, bestN = ln, n
		}
	}
	return best
}

// isLikelyText reports whether data looks like text (no NUL byte in its
// first binarySniffLen bytes).
func isLikelyText(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) < 0
}
