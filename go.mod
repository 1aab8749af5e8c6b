module github.com/graphc/graphc

go 1.26

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
