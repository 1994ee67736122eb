package bge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// tokenizerJSON is the part of a Hugging Face tokenizers tokenizer.json
// (format version 1.0) that decides the token ids of one text. The
// normalizer, pre-tokenizer and model are read strictly (a field this
// reader does not know is an error), so that a setting it would not honour
// is refused rather than ignored.
type tokenizerJSON struct {
	Version       string          `json:"version"`
	AddedTokens   []addedJSON     `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         json.RawMessage `json:"model"`
}

type addedJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	Lstrip     bool   `json:"lstrip"`
	Rstrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type normalizerJSON struct {
	Type               string `json:"type"`
	CleanText          bool   `json:"clean_text"`
	HandleChineseChars bool   `json:"handle_chinese_chars"`
	StripAccents       *bool  `json:"strip_accents"`
	Lowercase          bool   `json:"lowercase"`
}

type preTokenizerJSON struct {
	Type string `json:"type"`
}

type wordPieceJSON struct {
	Type                    string         `json:"type"`
	UnkToken                string         `json:"unk_token"`
	ContinuingSubwordPrefix string         `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    int            `json:"max_input_chars_per_word"`
	Vocab                   map[string]int `json:"vocab"`
}

// templateJSON is a TemplateProcessing post-processor; only its template
// for a single sequence is read, the one that puts [CLS] and [SEP] around
// the content.
type templateJSON struct {
	Type   string `json:"type"`
	Single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int `json:"ids"`
	} `json:"special_tokens"`
}

// newTokenizer reads a tokenizer.json and refuses any setting the
// tokenizer does not run as written.
func newTokenizer(tokenizerJSONBytes []byte) (*tokenizer, error) {
	t, err := readTokenizerJSON(tokenizerJSONBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	return t, nil
}

func readTokenizerJSON(b []byte) (*tokenizer, error) {
	var f tokenizerJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if f.Version != "1.0" {
		return nil, fmt.Errorf("format version %q, want 1.0", f.Version)
	}
	if err := checkNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	var pre preTokenizerJSON
	if err := strict(f.PreTokenizer, &pre); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if pre.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("pre_tokenizer is %q, want BertPreTokenizer", pre.Type)
	}
	t, err := readWordPiece(f.Model)
	if err != nil {
		return nil, err
	}
	if t.added, err = readAdded(f.AddedTokens, t.vocabSize); err != nil {
		return nil, err
	}
	if t.cls, t.sep, err = readTemplate(f.PostProcessor); err != nil {
		return nil, err
	}
	if t.cls < 0 || t.cls >= t.vocabSize || t.sep < 0 || t.sep >= t.vocabSize {
		return nil, fmt.Errorf("post_processor: [CLS] id %d or [SEP] id %d is outside the vocab", t.cls, t.sep)
	}
	return t, nil
}

// strict decodes raw into v, refusing fields v does not have.
func strict(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return fmt.Errorf("missing")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// checkNormalizer accepts BertNormalizer with every step on: strip_accents
// null means "as lowercase", which is on.
func checkNormalizer(raw json.RawMessage) error {
	var n normalizerJSON
	if err := strict(raw, &n); err != nil {
		return fmt.Errorf("normalizer: %w", err)
	}
	switch {
	case n.Type != "BertNormalizer":
		return fmt.Errorf("normalizer is %q, want BertNormalizer", n.Type)
	case !n.CleanText:
		return fmt.Errorf("normalizer: clean_text is off, want on")
	case !n.HandleChineseChars:
		return fmt.Errorf("normalizer: handle_chinese_chars is off, want on")
	case !n.Lowercase:
		return fmt.Errorf("normalizer: lowercase is off, want on (an uncased model)")
	case n.StripAccents != nil && !*n.StripAccents:
		return fmt.Errorf("normalizer: strip_accents is false, want null or true")
	}
	return nil
}

// readWordPiece reads the model: WordPiece with the "##" prefix over a
// vocabulary whose ids are 0 to its size less one.
func readWordPiece(raw json.RawMessage) (*tokenizer, error) {
	var m wordPieceJSON
	if err := strict(raw, &m); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	switch {
	case m.Type != "WordPiece":
		return nil, fmt.Errorf("model is %q, want WordPiece", m.Type)
	case m.ContinuingSubwordPrefix != "##":
		return nil, fmt.Errorf("model: continuing_subword_prefix is %q, want ##", m.ContinuingSubwordPrefix)
	case m.MaxInputCharsPerWord <= 0:
		return nil, fmt.Errorf("model: max_input_chars_per_word is %d, want a positive count", m.MaxInputCharsPerWord)
	}
	t := &tokenizer{
		vocabSize:    len(m.Vocab),
		words:        make(map[string]int32, len(m.Vocab)),
		conts:        make(map[string]int32, len(m.Vocab)/4),
		maxWordChars: m.MaxInputCharsPerWord,
	}
	seen := make([]bool, len(m.Vocab))
	for piece, id := range m.Vocab {
		if id < 0 || id >= len(m.Vocab) || seen[id] {
			return nil, fmt.Errorf("model: vocab id %d of %q repeats or is outside 0..%d", id, piece, len(m.Vocab)-1)
		}
		seen[id] = true
		t.maxPieceBytes = max(t.maxPieceBytes, len(piece))
		if rest, ok := strings.CutPrefix(piece, "##"); ok && rest != "" {
			t.conts[rest] = int32(id)
		} else {
			t.words[piece] = int32(id)
		}
	}
	var ok bool
	if t.unk, ok = m.Vocab[m.UnkToken]; !ok {
		return nil, fmt.Errorf("model: unk_token %q is not in the vocab", m.UnkToken)
	}
	if t.pad, ok = m.Vocab["[PAD]"]; !ok {
		return nil, fmt.Errorf("model: the vocab has no [PAD]")
	}
	return t, nil
}

// readAdded reads the added tokens, which encode finds in the raw text; it
// refuses the options that would match them otherwise.
func readAdded(added []addedJSON, vocabSize int) ([]addedToken, error) {
	out := make([]addedToken, 0, len(added))
	for _, a := range added {
		switch {
		case a.Content == "":
			return nil, fmt.Errorf("added token %d is empty", a.ID)
		case a.ID < 0 || a.ID >= vocabSize:
			return nil, fmt.Errorf("added token %q has id %d, outside the vocab", a.Content, a.ID)
		case a.SingleWord || a.Lstrip || a.Rstrip || a.Normalized:
			return nil, fmt.Errorf("added token %q: single_word, lstrip, rstrip and normalized must be false", a.Content)
		}
		out = append(out, addedToken{content: a.Content, id: a.ID})
	}
	return out, nil
}

// readTemplate checks that a single text is [CLS] $A [SEP] and returns the
// two special ids.
func readTemplate(raw json.RawMessage) (cls, sep int, err error) {
	var p templateJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return 0, 0, fmt.Errorf("post_processor: %w", err)
	}
	s := p.Single
	if p.Type != "TemplateProcessing" || len(s) != 3 || s[0].SpecialToken == nil || s[1].Sequence == nil ||
		s[1].Sequence.ID != "A" || s[2].SpecialToken == nil {
		return 0, 0, fmt.Errorf("post_processor: want a TemplateProcessing whose single template is a special token, $A, a special token")
	}
	id := func(name string) (int, error) {
		ids := p.SpecialTokens[name].IDs
		if len(ids) != 1 {
			return 0, fmt.Errorf("post_processor: special token %q has %d ids, want 1", name, len(ids))
		}
		return ids[0], nil
	}
	if cls, err = id(s[0].SpecialToken.ID); err != nil {
		return 0, 0, err
	}
	if sep, err = id(s[2].SpecialToken.ID); err != nil {
		return 0, 0, err
	}
	return cls, sep, nil
}
