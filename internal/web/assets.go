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
	"sort"
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

// assetSet holds the embedded files by path ("/assets/app.js") and the
// version: a hash of all of them. Pages link the assets under
// /assets/v-<version>/..., which may be cached for good (immutable), since
// any change to any file changes the version and so every URL; relative
// module imports stay under the same prefix. Unversioned paths still
// work, revalidated on every use.
type assetSet struct {
	files   map[string]*asset
	version string
}

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
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte(s.files[n].etag))
	}
	s.version = "v-" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
	return s, nil
}

// prefix is where pages link the assets.
func (s *assetSet) prefix() string { return "/assets/" + s.version + "/" }

// serveAsset serves /assets/...: scripts, styles and the vendored
// library, with no data in them, so they need no session (the login
// page uses the style sheet).
func (u *UI) serveAsset(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	cache := "no-cache"
	if rest, ok := strings.CutPrefix(p, "/assets/v-"); ok {
		// A versioned URL: the current version's files never change
		// under it. Another version (a page from before an upgrade) gets
		// today's files, revalidated.
		ver, file, _ := strings.Cut(rest, "/")
		if "v-"+ver == u.assets.version {
			cache = "public, max-age=31536000, immutable"
		}
		p = "/assets/" + file
	}
	a := u.assets.files[p]
	if a == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", cache)
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", a.ctype)
	w.Write(a.body)
}

// pageSet holds the app document and the login page templates.
type pageSet struct {
	app   *template.Template
	login *template.Template
}

// appData fills the app document: the asset prefix, and the user and
// CSRF token of the session, so the app starts without asking for them.
type appData struct {
	Assets   string
	Username string
	CSRF     string
	// UserType and Pages (the paths the user may open, space-separated)
	// shape the menu; the server checks each page request itself.
	UserType string
	Pages    string
	// Actions: the role's action rules the pages follow (pageActions it
	// allows, space-separated).
	Actions string
}

// loginData fills the login page; html/template escapes every field.
type loginData struct {
	Assets             string
	CSRF               string
	Error              string
	PasswordFile       string
	PasswordFileExists bool
}

func loadPages() (*pageSet, error) {
	app, err := template.ParseFS(pageFS, "pages/app.html")
	if err != nil {
		return nil, fmt.Errorf("BUG: cannot parse the app document: %w", err)
	}
	login, err := template.ParseFS(pageFS, "pages/login.html")
	if err != nil {
		return nil, fmt.Errorf("BUG: cannot parse the login page: %w", err)
	}
	return &pageSet{app: app, login: login}, nil
}
