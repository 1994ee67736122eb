package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/vaultask/vaultask/rag"
)

// FeatureRow is one question's coverage features, as eval web-trigger
// --features writes them, one JSON object per line.
type FeatureRow struct {
	File     string             `json:"file"`
	Line     int                `json:"line"`
	Group    string             `json:"group"`
	Covered  bool               `json:"covered"`
	Question string             `json:"question"`
	Features map[string]float64 `json:"features"`
}

// WriteFeatures retrieves every question of files with p, over the whole
// vault or as a request that allows the web, and writes its features to w.
func WriteFeatures(ctx context.Context, p *rag.Pipeline, files []*QuestionFile, allowWeb bool, w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, f := range files {
		for _, q := range f.Questions {
			r, err := p.Retrieve(ctx, rag.Question{Text: q.Text, AllowWeb: allowWeb})
			if err != nil {
				return fmt.Errorf("%s:%d: %w", f.Path, q.Line, err)
			}
			if err := enc.Encode(FeatureRow{File: f.Path, Line: q.Line, Group: q.Group, Covered: q.Covered(), Question: q.Text, Features: r.Features}); err != nil {
				return err
			}
		}
	}
	return nil
}
