package dsl

import (
	"bytes"
	"strings"
)

// A minimal reader and writer for txtar archives, in the format of
// golang.org/x/tools/txtar: an optional comment, then files, each
// introduced by a "-- name --" line. graphc does not depend on x/tools
// directly yet; switch to that package when it does.

type archive struct {
	comment []byte
	files   []archiveFile
}

type archiveFile struct {
	name string
	data []byte
}

// parseArchive parses a txtar archive.
func parseArchive(data []byte) *archive {
	a := &archive{}
	var cur *[]byte = &a.comment
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		if name, ok := marker(line); ok {
			a.files = append(a.files, archiveFile{name: name})
			cur = &a.files[len(a.files)-1].data
			continue
		}
		*cur = append(*cur, line...)
	}
	return a
}

// marker returns the file name if line is a "-- name --" marker.
func marker(line []byte) (string, bool) {
	s := strings.TrimRight(string(line), "\r\n")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

// format returns the archive's text. Every section ends with a newline.
func (a *archive) format() []byte {
	var b bytes.Buffer
	b.Write(fixNL(a.comment))
	for _, f := range a.files {
		b.WriteString("-- " + f.name + " --\n")
		b.Write(fixNL(f.data))
	}
	return b.Bytes()
}

// file returns the named section, or nil.
func (a *archive) file(name string) *archiveFile {
	for i := range a.files {
		if a.files[i].name == name {
			return &a.files[i]
		}
	}
	return nil
}

// set replaces or appends the named section.
func (a *archive) set(name string, data []byte) {
	if f := a.file(name); f != nil {
		f.data = data
		return
	}
	a.files = append(a.files, archiveFile{name: name, data: data})
}

func fixNL(data []byte) []byte {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return data
	}
	return append(data[:len(data):len(data)], '\n')
}
