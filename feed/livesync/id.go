package livesync

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
)

// DocumentID derives the _id the plugin gives a vault note (path2id,
// FORMAT.md §2): lower-cased unless caseSensitive, "/" before a leading "_",
// or, when obfuscationPassphrase is not empty, "f:" and a SHA-256 of the
// passphrase's hash and the (possibly lower-cased) path. Use it to settle two
// documents that claim one path: prefer the one whose id matches.
func DocumentID(path string, caseSensitive bool, obfuscationPassphrase string) string {
	s := path
	if !caseSensitive {
		s = jsLower(s)
	}
	if obfuscationPassphrase == "" {
		if strings.HasPrefix(s, "_") {
			return "/" + s
		}
		return s
	}
	return "f:" + sha256Hex(sha256Hex(obfuscationPassphrase)+":"+s)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// jsLower is JavaScript's String.prototype.toLowerCase: Go's simple case
// mapping plus the two rules it lacks, the unconditional İ → i̇ of
// SpecialCasing and the final sigma.
func jsLower(s string) string {
	if !strings.ContainsAny(s, "İΣ") {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && finalSigma(rs, i):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition: a cased letter before i and
// none after it, skipping case-ignorable characters both ways.
func finalSigma(rs []rune, i int) bool {
	before := false
	for j := i - 1; j >= 0; j-- {
		if !caseIgnorable(rs[j]) {
			before = cased(rs[j])
			break
		}
	}
	if !before {
		return false
	}
	for j := i + 1; j < len(rs); j++ {
		if !caseIgnorable(rs[j]) {
			return !cased(rs[j])
		}
	}
	return true
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk and the
// Word_Break classes MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00b7', '\u0387', '\u055f', '\u05f4', '\u2018', '\u2019', '\u2024',
		'\u2027', '\ufe13', '\ufe52', '\ufe55', '\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
