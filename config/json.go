package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseJSON reads an overrides document into the yaml.Node tree that
// config.yaml parses to, so both files go through one strict walker (and keep
// their repeated keys, which encoding/json would silently merge). yaml.v3
// cannot read JSON itself: it rejects the \/ escape, for one.
func parseJSON(data []byte, source string) (*yaml.Node, error) {
	r := jsonReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data, source: source, line: 1}
	r.dec.UseNumber()
	root, err := r.value()
	if err != nil {
		return nil, err
	}
	if _, err := r.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s:%d: not valid JSON: data after the top-level value", source, r.lineAt(r.dec.InputOffset()))
	}
	return root, nil
}

// jsonReader turns JSON tokens into yaml.Nodes, tracking line numbers for
// errors as it goes.
type jsonReader struct {
	dec    *json.Decoder
	data   []byte
	source string
	off    int64 // bytes counted into line so far
	line   int
}

func (r *jsonReader) lineAt(off int64) int {
	off = min(off, int64(len(r.data)))
	if off > r.off {
		r.line += bytes.Count(r.data[r.off:off], []byte("\n"))
		r.off = off
	}
	return r.line
}

func (r *jsonReader) token() (json.Token, int, error) {
	tok, err := r.dec.Token()
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, 0, fmt.Errorf("%s:%d: not valid JSON: %w", r.source, r.lineAt(syntax.Offset), err)
		}
		return nil, 0, fmt.Errorf("%s: not valid JSON: %w", r.source, err)
	}
	return tok, r.lineAt(r.dec.InputOffset()), nil
}

func (r *jsonReader) value() (*yaml.Node, error) {
	tok, line, err := r.token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		return r.collection(tok, line)
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok, Line: line}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(tok.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: tok.String(), Line: line}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(tok), Line: line}, nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line}, nil
}

// collection reads the members of the object or array that open began.
func (r *jsonReader) collection(open json.Delim, line int) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line}
	if open == '{' {
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
	}
	for r.dec.More() {
		if n.Kind == yaml.MappingNode {
			key, err := r.value()
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, key)
		}
		member, err := r.value()
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, member)
	}
	// The closing delimiter; the decoder has already checked it matches.
	if _, _, err := r.token(); err != nil {
		return nil, err
	}
	return n, nil
}
