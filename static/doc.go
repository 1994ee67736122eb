// Package static embeds the HTML, CSS and JavaScript served by transport. It
// holds no logic and imports no sibling package.
package static
