package bench

import (
	"context"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vaultask/vaultask/index"
)

func scaleCurve(ctx context.Context, r *run, s *Section) error {
	s.Command = r.reproduce("8")
	m := r.first()
	s.Notes = append(s.Notes,
		fmt.Sprintf("Index throughput (section 2's measurement: `vaultask index` from the test CouchDB, full text only) and retrieval latency (section 3's, alone, with %s) on the generated vault at each size. A vault of n notes is the first n notes of any larger one, plus its topic notes.", m.label),
		"With vectors the index time is the embedder's: chunks ÷ its rate in section 4, whatever the size, so the curve is full text only.")
	// notes are the indexed vaults' sizes, retrNotes those of the scale
	// indexes retrieval ran on (with their topic notes).
	var notes, notesPS, chunksPS, retrNotes, p50, p95 []float64
	ixs, err := r.scaleIndexes(ctx, m, r.sz.scaleTargets())
	if err != nil {
		return err
	}
	for _, n := range r.sz.curve {
		tp := r.genFTS
		if n != r.sz.genNotes || tp.notes == 0 {
			db := fmt.Sprintf("bench-curve-%d", n)
			if _, err := r.loadGenerated(ctx, db, n); err != nil {
				return err
			}
			var ix indexed
			runs := r.sz.heavyRuns
			if n >= 10000 {
				runs = 1 // minutes per run: these rows have n = 1
			}
			if ix, tp, err = r.throughput(ctx, &Section{}, db, fmt.Sprintf("generated %d", n), nil, runs, nil); err != nil {
				return err
			}
			_ = os.Remove(ix.Path)
			_ = r.couch.DeleteDB(db)
		}
		s.add(fmt.Sprintf("index %d notes (%d chunks), FTS only", tp.notes, tp.chunks), "notes/s", tp.notesPS)
		s.add(fmt.Sprintf("index %d notes (%d chunks), FTS only", tp.notes, tp.chunks), "chunks/s", tp.chunksPS)
		ix := ixs[scaleTarget{Notes: n}]
		store, err := index.Open(ctx, index.Options{Path: ix.Path, Space: m.space, ReadOnly: true,
			Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}, Logger: quiet})
		if err != nil {
			return err
		}
		lat, err := r.measureRetrieval(ctx, m, store.Search(), store, Questions(50), r.sz.queries, false)
		store.Close()
		if err != nil {
			return err
		}
		row := s.dist(fmt.Sprintf("retrieval at %d notes (%d chunks)", ix.Notes, ix.Chunks), "ms", lat.retrieve)
		notes = append(notes, float64(tp.notes))
		notesPS, chunksPS = append(notesPS, row0(tp.notesPS)), append(chunksPS, row0(tp.chunksPS))
		retrNotes = append(retrNotes, float64(ix.Notes))
		p50, p95 = append(p50, row.Summary.Median), append(p95, row.Summary.P95)
	}
	dir := filepath.Join(r.cfg.Out, "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	charts := []struct {
		file, title, x, y string
		xs                []float64
		lines             map[string][]float64
	}{
		{"index-throughput.png", "Initial index, FTS only (vaultask index from CouchDB)", "notes in the vault", "per second (median)", notes,
			map[string][]float64{"notes/s": notesPS, "chunks/s": chunksPS}},
		{"retrieval-by-notes.png", "Retrieval latency, warm, alone", "notes in the index", "ms", retrNotes,
			map[string][]float64{"p50": p50, "p95": p95}},
	}
	if len(r.queryPoints) > 0 {
		var xs, a50, a95, b50 []float64
		for _, q := range r.queryPoints {
			xs = append(xs, float64(q.chunks))
			sa, sb := summarize(q.alone), summarize(q.busy)
			a50, a95, b50 = append(a50, sa.Median), append(a95, sa.P95), append(b50, sb.Median)
		}
		charts = append(charts, struct {
			file, title, x, y string
			xs                []float64
			lines             map[string][]float64
		}{"retrieval-by-chunks.png", "Retrieval latency, warm (section 3)", "chunks in the index", "ms", xs,
			map[string][]float64{"p50 alone": a50, "p95 alone": a95, "p50, follower at 10 notes/s": b50}})
	}
	for _, c := range charts {
		if err := lineChart(filepath.Join(dir, c.file), c.title, c.x, c.y, c.xs, c.lines); err != nil {
			return err
		}
		s.Charts = append(s.Charts, c.file)
	}
	return nil
}

// row0 is the median of values.
func row0(values []float64) float64 { return summarize(values).Median }

var palette = []color.Color{color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff}}

// lineChart writes a PNG of one line per series over xs, x on a log scale.
func lineChart(path, title, xLabel, yLabel string, xs []float64, series map[string][]float64) error {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Y.Min = 0
	p.Legend.Top = true
	names := make([]string, 0, len(series))
	for name := range series {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		ys := series[name]
		pts := make(plotter.XYs, len(xs))
		for j := range xs {
			pts[j].X, pts[j].Y = xs[j], ys[j]
		}
		line, dots, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		line.Color, dots.Color, dots.Shape = c, c, draw.CircleGlyph{}
		p.Add(line, dots)
		p.Legend.Add(name, line, dots)
	}
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}
