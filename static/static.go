package static

import "embed"

// Files are the pages and their assets: chat.html and admin.html, and the
// stylesheets, scripts and icon they load from /assets/.
//
//go:embed *.html *.css *.js *.svg
var Files embed.FS
