package web

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// The app is plain ES modules and CSS, served as they are in the
// repository: no build step, so `go run ./cmd/peregrine serve` on a fresh
// clone serves exactly the sources, and there is no bundle to keep in
// step with them. uPlot is vendored as its release file
// (assets/vendor/uplot, with its licence).
//
//go:embed assets
var assetFS embed.FS

//go:embed pages/app.html pages/login.html
var pageFS embed.FS

// asset is one embedded file with its validator.
type asset struct {
	body  []byte
	etag  string
	ctype string
}

type assetSet struct{ files map[string]*asset }

// loadAssets reads every embedded asset once and hashes it: responses
// carry a strong ETag and "no-cache", so a browser revalidates each
// module (one cheap 304) and never runs a stale one after an upgrade.
func loadAssets() (*assetSet, error) {
	s := &assetSet{files: map[string]*asset{}}
	err := fs.WalkDir(assetFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assetFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		switch path.Ext(p) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".txt", "":
			ct = "text/plain; charset=utf-8"
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		s.files["/"+p] = &asset{body: b, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`, ctype: ct}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("BUG: cannot read the embedded web assets: %w", err)
	}
	return s, nil
}

// serveAsset serves /assets/...: scripts, styles and the vendored
// library, with no data in them, so they need no session (the login
// page uses the style sheet).
func (u *UI) serveAsset(w http.ResponseWriter, r *http.Request) {
	a := u.assets.files[r.URL.Path]
	if a == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "no-cache")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", a.ctype)
	w.Write(a.body)
}

// pageSet holds the app document and the login page template.
type pageSet struct {
	app   []byte
	login *template.Template
}

// loginData fills the login page; html/template escapes every field.
type loginData struct {
	CSRF               string
	Error              string
	PasswordFile       string
	PasswordFileExists bool
}

func loadPages() (*pageSet, error) {
	app, err := pageFS.ReadFile("pages/app.html")
	if err != nil {
		return nil, fmt.Errorf("BUG: %w", err)
	}
	login, err := template.ParseFS(pageFS, "pages/login.html")
	if err != nil {
		return nil, fmt.Errorf("BUG: cannot parse the login page: %w", err)
	}
	return &pageSet{app: app, login: login}, nil
}
