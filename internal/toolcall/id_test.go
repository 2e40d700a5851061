package toolcall

import (
	"regexp"
	"testing"
	"time"
)

func TestUUID7MatchesRFC9562(t *testing.T) {
	// RFC 9562, appendix A.6: unix_ts_ms 0x017F22E279B0, rand_a 0xCC3,
	// rand_b 0x18C4DC0C0C07398F (with the variant bits).
	got := uuid7(0x017F22E279B0, 0xCC3, 0x18C4DC0C0C07398F)
	if want := "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestNewIDIsVersion7InTimeOrder(t *testing.T) {
	shape := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	prev := newID()
	for range 1000 {
		id := newID()
		if !shape.MatchString(id) {
			t.Fatalf("%s is not a version 7 UUID", id)
		}
		if seen[id] {
			t.Fatalf("%s twice", id)
		}
		seen[id] = true
		// Ids of different milliseconds sort by time.
		if id[:13] < prev[:13] {
			t.Fatalf("%s sorts before the earlier %s", id, prev)
		}
		prev = id
	}
	before := newID()
	time.Sleep(2 * time.Millisecond)
	if after := newID(); after <= before {
		t.Errorf("an id 2ms later, %s, does not sort after %s", after, before)
	}
}
