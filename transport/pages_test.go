package transport

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/static"
	"github.com/vaultask/vaultask/tstest/smallvault"
)

// Every page and asset is served with its type, nosniff, the strict CSP
// and revalidation headers; gzipped when asked, the same bytes once
// unzipped; 304 for a matching ETag. The pages load only their own assets
// and hold no inline script or style, which the CSP would refuse.
func TestPagesServed(t *testing.T) {
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{})
	for path, ctype := range map[string]string{
		"/chat":             "text/html; charset=utf-8",
		"/admin":            "text/html; charset=utf-8",
		"/assets/chat.js":   "text/javascript; charset=utf-8",
		"/assets/admin.js":  "text/javascript; charset=utf-8",
		"/assets/chat.css":  "text/css; charset=utf-8",
		"/assets/admin.css": "text/css; charset=utf-8",
		"/assets/base.css":  "text/css; charset=utf-8",
		"/assets/icon.svg":  "image/svg+xml",
	} {
		resp := do(t, http.MethodGet, hs.URL+path, nil, "Accept-Encoding", "identity")
		body := readAll(t, resp)
		h := resp.Header
		if resp.StatusCode != http.StatusOK || h.Get("Content-Type") != ctype || len(body) == 0 {
			t.Errorf("%s: %d %q, %d bytes; want 200 %q", path, resp.StatusCode, h.Get("Content-Type"), len(body), ctype)
			continue
		}
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self';", "object-src 'none'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "*") {
			t.Errorf("%s: CSP %q allows more than this origin", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-cache" || h.Get("ETag") == "" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, h)
		}
		if again := do(t, http.MethodGet, hs.URL+path, nil, "Accept-Encoding", "identity", "If-None-Match", h.Get("ETag")); again.StatusCode != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", path, again.StatusCode)
		}
		req, _ := http.NewRequest(http.MethodGet, hs.URL+path, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		gz, err := http.DefaultTransport.RoundTrip(req) // the client would unzip it silently
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(gz.Body)
		if err != nil || gz.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(gz.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s gzipped: %v, headers %v", path, err, gz.Header)
		} else if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, body) {
			t.Errorf("%s: the gzipped body differs", path)
		}
		gz.Body.Close()
		if strings.HasSuffix(ctype, "html; charset=utf-8") {
			checkPageMarkup(t, hs.URL, path, string(body))
		}
	}
	for _, path := range []string{"/assets/chat.html", "/assets/nope.js", "/assets/", "/static/chat.js"} {
		if resp := do(t, http.MethodGet, hs.URL+path, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(hs.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/chat" {
		t.Errorf("/: %d to %q, want 302 to /chat", resp.StatusCode, resp.Header.Get("Location"))
	}
}

var (
	inlineScript = regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]`)
	inlineStyle  = regexp.MustCompile(`(?i)<style|\sstyle=|\son[a-z]+=`)
	pageRef      = regexp.MustCompile(`(?:src|href)="([^"]*)"`)
)

// checkPageMarkup fails a page with inline script, style or handlers, or a
// reference to anything but its own assets.
func checkPageMarkup(t *testing.T, base, path, html string) {
	t.Helper()
	if m := inlineScript.FindString(html); m != "" {
		t.Errorf("%s has an inline script: %q", path, m)
	}
	if m := inlineStyle.FindString(html); m != "" {
		t.Errorf("%s has inline style or a handler: %q", path, m)
	}
	for _, m := range pageRef.FindAllStringSubmatch(html, -1) {
		ref := m[1]
		if ref == "/chat" {
			continue
		}
		if !strings.HasPrefix(ref, "/assets/") {
			t.Errorf("%s refers to %q, not one of its own assets", path, ref)
			continue
		}
		if resp := do(t, http.MethodGet, base+ref, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s refers to %s, which is %d", path, ref, resp.StatusCode)
		}
	}
}

// The pages are served to anyone and hold no data; what /chat asks the
// server needs the API key, /admin's data the admin key, and nothing a
// visitor without a key can fetch names a personal note.
func TestPagesHoldNoData(t *testing.T) {
	opts := adminOptions(t)
	hs, _ := testServer(t, smallvault.Open(t), upstream(t), Options{APIKey: "api-key", ObsidianVault: "My Notes", Admin: opts})
	for _, path := range []string{"/chat", "/admin", "/assets/chat.js", "/assets/admin.js", "/assets/chat.css", "/assets/admin.css", "/assets/base.css", "/assets/icon.svg"} {
		resp := do(t, http.MethodGet, hs.URL+path, nil)
		body := string(readAll(t, resp))
		if resp.StatusCode != http.StatusOK || strings.Contains(body, smallvault.PersonalMark) || strings.Contains(body, "Diary") || strings.Contains(body, "My Notes") {
			t.Errorf("%s without a key: %d, or it holds vault data", path, resp.StatusCode)
		}
	}
	for _, path := range []string{"/chat/config", "/status", "/status/notes", "/events", "/admin/config"} {
		if resp := do(t, http.MethodGet, hs.URL+path, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a key: %d, want 401", path, resp.StatusCode)
		}
	}
	var cfg map[string]string
	decode(t, do(t, http.MethodGet, hs.URL+"/chat/config", nil, "Authorization", "Bearer api-key"), &cfg)
	if cfg["obsidian_vault"] != "My Notes" {
		t.Errorf("/chat/config = %v", cfg)
	}
}

// /admin offers every retrieval key the server lets it change: a key added
// to config but not to the page could be tuned only by hand.
func TestAdminPageOffersEveryRetrievalKey(t *testing.T) {
	js, err := static.Files.ReadFile("admin.js")
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeOf(config.Retrieval{})
	for i := range typ.NumField() {
		key := "retrieval." + strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
		if ok, _ := config.Editable(key); !ok {
			continue
		}
		if !strings.Contains(string(js), `"`+key+`"`) {
			t.Errorf("%s is editable but /admin has no field for it", key)
		}
		// A key with a fixed set of values is a list on the page: the
		// list must offer each value config accepts, and no other.
		oneof, ok := strings.CutPrefix(typ.Field(i).Tag.Get("validate"), "oneof=")
		if !ok {
			continue
		}
		m := regexp.MustCompile(`"` + regexp.QuoteMeta(key) + `": \[([^\]]*)\]`).FindStringSubmatch(string(js))
		if m == nil {
			t.Errorf("%s takes one of %q but /admin offers no list of them", key, oneof)
			continue
		}
		var offered []string
		for _, v := range strings.Split(m[1], ",") {
			offered = append(offered, strings.Trim(strings.TrimSpace(v), `"`))
		}
		want := strings.Fields(oneof)
		slices.Sort(offered)
		slices.Sort(want)
		if !slices.Equal(offered, want) {
			t.Errorf("%s: /admin offers %q, config accepts %q", key, offered, want)
		}
	}
}
