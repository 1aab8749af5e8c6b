module github.com/graphc/graphc

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/ardanlabs/jinja v1.8.0
	github.com/dave/jennifer v1.7.1
	github.com/ebitengine/purego v0.11.3
	github.com/google/go-cmp v0.7.0
	golang.org/x/sys v0.50.0
	golang.org/x/tools v0.52.0
	gonum.org/v1/gonum v0.17.0
)
