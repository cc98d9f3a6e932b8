package textsafe

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 traces"}, {1, "1 trace"}, {2, "2 traces"}} {
		if got := Plural(c.n, "trace", "traces"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes: the cut backs off to the rune start
		{"日本語", 4, "日…"},
		{"abc", 0, "…"},
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	if got := Cut("日本語", 5); got != "日" {
		t.Errorf("Cut = %q", got)
	}
}

func TestListed(t *testing.T) {
	if got := Listed([]string{"a", "b", "c"}, 5, 2, ", ", "agents"); got != "a, b, … and 3 more agents" {
		t.Fatalf("got %q", got)
	}
	if got := Listed([]string{"a", "b"}, 2, 10, "; ", "runs"); got != "a; b" {
		t.Fatalf("got %q", got)
	}
}
