package transport

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/vaultask/vaultask/static"
)

// The pages' security headers. The pages load only their own scripts and
// styles (no inline script or style, nothing from elsewhere), talk only to
// this origin, cannot be framed, and Trusted Types make any string written
// into a DOM sink such as innerHTML an error: answer text, which quotes
// notes and clipped web pages, is only ever set as text.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// asset is an embedded file as served: as it is and gzipped, with its
// type and an ETag of its content.
type asset struct {
	body, gz    []byte
	contentType string
	etag        string
}

// loadAssets reads and compresses every embedded file once, at start.
func loadAssets(fsys fs.FS) (map[string]*asset, error) {
	out := map[string]*asset{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := contentTypes[path.Ext(name)]
		if !ok {
			return fmt.Errorf("static: %s has no content type", name)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // the level is valid
		_, _ = zw.Write(body)                                   // a bytes.Buffer does not fail
		_ = zw.Close()
		sum := sha256.Sum256(body)
		out[name] = &asset{body: body, gz: gz.Bytes(), contentType: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	return out, err
}

// pageRoutes serves /chat and /admin, their assets, and what /chat needs to
// know of the server. The pages themselves hold no data and are served to
// anyone; everything they show comes from the authenticated endpoints.
func (s *Server) pageRoutes() error {
	assets, err := loadAssets(static.Files)
	if err != nil {
		return err
	}
	for _, page := range []string{"chat", "admin"} {
		a := assets[page+".html"]
		if a == nil {
			return fmt.Errorf("static: no %s.html", page)
		}
		s.mux.HandleFunc("GET /"+page, func(w http.ResponseWriter, r *http.Request) { serveAsset(w, r, a) })
	}
	s.mux.HandleFunc("GET /assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		a := assets[r.PathValue("name")]
		if a == nil || strings.HasSuffix(r.PathValue("name"), ".html") {
			http.NotFound(w, r)
			return
		}
		serveAsset(w, r, a)
	})
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/chat", http.StatusFound)
	})
	s.mux.Handle("GET /chat/config", s.authed(http.HandlerFunc(s.chatConfig)))
	return nil
}

// serveAsset sends an embedded file with the pages' security headers,
// gzipped when the client takes it. Browsers revalidate it each time
// (no-cache with an ETag), so a new build's pages are used at once and an
// unchanged one costs a 304.
func serveAsset(w http.ResponseWriter, r *http.Request, a *asset) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	body, etag := a.body, a.etag
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, etag = a.gz, strings.TrimSuffix(a.etag, `"`)+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reads an Accept-Encoding header: gzip listed without q=0.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

func matchesETag(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}

// chatConfig is what /chat needs to know of this server: the vault's name
// in Obsidian, to open a cited note there and save a conversation as a
// note, when it is configured.
func (s *Server) chatConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"obsidian_vault": s.opts.ObsidianVault, "version": s.opts.Version})
}
