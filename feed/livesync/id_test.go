package livesync

import "testing"

// FORMAT.md §2: ids of the real CLI output and of commonlib's regression
// vectors.
func TestDocumentID(t *testing.T) {
	for _, tc := range []struct {
		path          string
		caseSensitive bool
		passphrase    string
		want          string
	}{
		{"Notes/Shopping List.md", false, "", "notes/shopping list.md"},
		{"_private/Calculus.md", false, "", "/_private/calculus.md"},
		{"_private/Calculus.md", true, "", "/_private/Calculus.md"},
		{"tr/Eklentiler/Dosya Gezgini.md", true, "", "tr/Eklentiler/Dosya Gezgini.md"},
		{"Notes/Shopping List.md", false, passphrase, "f:b42230bb4622e38319a7a4cc4cb53478738addf8ee84cb033d1501f3fe56935d"},
		// The "/" escape is not hashed.
		{"_private/Calculus.md", false, passphrase, "f:84c9e080adcc8814addda66d0878eb860010bf2e535441aed102a4a09b0b7d3d"},
	} {
		if got := DocumentID(tc.path, tc.caseSensitive, tc.passphrase); got != tc.want {
			t.Errorf("DocumentID(%q, %v, %q) = %s, want %s", tc.path, tc.caseSensitive, tc.passphrase, got, tc.want)
		}
	}
}

// jsLower agrees with JavaScript's toLowerCase (node, in vectors.json) where
// Go's simple case mapping does not: İ and the final sigma.
func TestJSLower(t *testing.T) {
	v := mustVectors(t)
	if len(v.Lower) == 0 {
		t.Fatal("no vectors")
	}
	for in, want := range v.Lower {
		if got := jsLower(in); got != want {
			t.Errorf("jsLower(%q) = %q, want %q", in, got, want)
		}
	}
}
