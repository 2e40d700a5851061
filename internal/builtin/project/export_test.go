package project

import (
	"context"
	"log/slog"
)

// The black-box tests (package project_test) check what the index holds of a tree without
// the server around it, hold the indexing at a file to see a partial answer, size their
// inputs by the package's bounds, and check that the commit tool's code and its schema agree:
// these lend them what that takes.

// The bounds of general_query's input.
const (
	MaxContextBytes = maxContextBytes
	MaxScopeEntries = maxScopeEntries
	MaxScopeEntry   = maxScopeEntry
)

// The names general_query's metadata gives the steps of its answer.
const (
	ToolIndex     = toolIndex
	ToolRetrieval = toolRetrieval
	ToolAnswer    = toolAnswer
)

// ValidateCommitRequest checks a commit_message request as the tool does.
var ValidateCommitRequest = validateCommitRequest

// SetBeforeFile makes the server's indexing call hook before it analyses each file (by its
// path relative to the root). Set it before Run.
func (s *Server) SetBeforeFile(hook func(rel string)) { s.idx.beforeFile = hook }

// BuiltIndex is a finished index of a tree, as the server builds it.
type BuiltIndex struct{ ix *index }

// BuildIndex indexes the tree under root, skipping files larger than maxFileSize.
func BuildIndex(root string, maxFileSize int64) (*BuiltIndex, error) {
	ix := newIndex(root, maxFileSize, -1, slog.New(slog.DiscardHandler))
	if err := ix.build(context.Background(), true); err != nil {
		return nil, err
	}
	return &BuiltIndex{ix: ix}, nil
}

// Files returns the paths of the indexed files, relative to the root, as the index orders them.
func (b *BuiltIndex) Files() []string {
	snap, _ := b.ix.current()
	var out []string
	for _, f := range snap.files {
		out = append(out, f.path)
	}
	return out
}

// Passages is how many passages the index holds.
func (b *BuiltIndex) Passages() int {
	snap, _ := b.ix.current()
	return len(snap.passages)
}

// Complete reports whether the index's snapshot is complete.
func (b *BuiltIndex) Complete() bool {
	_, complete := b.ix.current()
	return complete
}

// Progress is the index's progress as the server reports it.
func (b *BuiltIndex) Progress() TaskProgress { return b.ix.progressNow() }
