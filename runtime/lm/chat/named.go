package chat

import (
	"embed"
	"path"
	"slices"
	"strings"
)

// templates holds real models' chat templates under short names, for the
// files graphc writes (gguf new -arch -chat-template). Each is a template
// of testdata/jinja2, which the tests hold to Jinja2's rendering.
//
//go:embed templates/*.jinja
var templates embed.FS

// Named returns the template called name: "chatml" (ChatML) or another of
// Names.
func Named(name string) (string, bool) {
	if name == "chatml" {
		return ChatML, true
	}
	src, err := templates.ReadFile("templates/" + name + ".jinja")
	return string(src), err == nil
}

// Names lists the names Named knows, sorted.
func Names() []string {
	names := []string{"chatml"}
	files, _ := templates.ReadDir("templates")
	for _, f := range files {
		names = append(names, strings.TrimSuffix(f.Name(), path.Ext(f.Name())))
	}
	slices.Sort(names)
	return names
}
