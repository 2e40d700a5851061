// Package taskwire holds the input rules of the task wire format (seed
// 002) that the reference task API (package taskapi) and the task MCP
// server in front of it (package tasks) must apply alike: which due dates
// parse, which text a task can keep, and which user ids are accepted.
// Keeping them in one place means the MCP server accepts exactly what the
// backend accepts, and rejects up front what the backend would refuse.
package taskwire

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxUserIDLength is the longest user id accepted, in characters.
const MaxUserIDLength = 200

// dueDateLayouts are the ISO 8601 forms accepted for a due date: RFC 3339,
// a date-time without a zone, and a date alone. The last two are UTC.
var dueDateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"}

// ParseDueDate parses a due date in one of the accepted ISO 8601 forms:
// RFC 3339 ("2025-12-20T10:00:00Z", "2025-12-20T11:00:00+01:00"), a
// date-time without a zone ("2025-12-20T10:00:00") or a date alone
// ("2025-12-20"); the last two are taken as UTC. The result is in UTC. ok
// is false for anything else, and for the zero time, which stores use to
// mean "no due date".
func ParseDueDate(s string) (t time.Time, ok bool) {
	for _, layout := range dueDateLayouts {
		if t, err := time.Parse(layout, s); err == nil && !t.IsZero() {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// TextProblem says why s cannot be kept as a task's title or description,
// or returns "" when it can. The task stores cannot keep NUL characters
// (PostgreSQL text refuses them) or invalid UTF-8, and input is never
// changed silently to fit, so such text is refused.
func TextProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case strings.ContainsRune(s, 0):
		return "must not contain NUL characters (U+0000)"
	}
	return ""
}

// UserIDProblem says what is wrong with a user id, or returns "" when it
// is acceptable: present, printable UTF-8 without control characters, and
// at most [MaxUserIDLength] characters.
func UserIDProblem(id string) string {
	switch {
	case id == "":
		return "is empty"
	case !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0:
		return "must be printable UTF-8, without control characters such as newlines"
	case utf8.RuneCountInString(id) > MaxUserIDLength:
		return fmt.Sprintf("is longer than %d characters", MaxUserIDLength)
	}
	return ""
}
