package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Logistic is a logistic regression over standardised features: the
// probability of a positive example x is σ(Bias + Σ Weights[i] ×
// (x[i] − Mean[i]) / Scale[i]).
type Logistic struct {
	Mean, Scale, Weights []float64
	Bias                 float64
}

// Probability is l's probability for x.
func (l Logistic) Probability(x []float64) float64 {
	z := l.Bias
	for i, v := range x {
		z += l.Weights[i] * (v - l.Mean[i]) / l.Scale[i]
	}
	return 1 / (1 + math.Exp(-z))
}

// FitLogistic fits a logistic regression to the examples xs (rows of
// equal length) with labels ys by Newton's method, with an L2 penalty of
// lambda on the weights (not the bias) of the standardised features.
// Examples are weighted by ws (nil: all 1), so that each group of
// questions can count alike whatever its size.
func FitLogistic(xs [][]float64, ys []bool, ws []float64, lambda float64) (Logistic, error) {
	if len(xs) == 0 || len(xs) != len(ys) || (ws != nil && len(ws) != len(xs)) {
		return Logistic{}, fmt.Errorf("fit: %d examples, %d labels, %d weights", len(xs), len(ys), len(ws))
	}
	if !slices.Contains(ys, true) || !slices.Contains(ys, false) {
		return Logistic{}, errors.New("fit: the examples need both labels")
	}
	d := len(xs[0])
	l := Logistic{Mean: make([]float64, d), Scale: make([]float64, d), Weights: make([]float64, d)}
	for j := range d {
		var sum, sq float64
		for _, x := range xs {
			if len(x) != d {
				return Logistic{}, fmt.Errorf("fit: an example has %d features, want %d", len(x), d)
			}
			sum += x[j]
		}
		mean := sum / float64(len(xs))
		for _, x := range xs {
			sq += (x[j] - mean) * (x[j] - mean)
		}
		l.Mean[j], l.Scale[j] = mean, math.Sqrt(sq/float64(len(xs)))
		if l.Scale[j] < 1e-9 {
			l.Scale[j] = 1 // a constant feature: its weight stays 0 under the penalty
		}
	}
	// z are the standardised examples with a leading 1 for the bias.
	z := make([][]float64, len(xs))
	for i, x := range xs {
		z[i] = make([]float64, d+1)
		z[i][0] = 1
		for j := range d {
			z[i][j+1] = (x[j] - l.Mean[j]) / l.Scale[j]
		}
	}
	beta := make([]float64, d+1)
	for range 100 {
		grad := make([]float64, d+1)
		hess := make([][]float64, d+1)
		for j := range hess {
			hess[j] = make([]float64, d+1)
		}
		for i, zi := range z {
			w := 1.0
			if ws != nil {
				w = ws[i]
			}
			p := sigmoid(dot(beta, zi))
			y := 0.0
			if ys[i] {
				y = 1
			}
			for a := range zi {
				grad[a] += w * (y - p) * zi[a]
				for b := range zi {
					hess[a][b] += w * p * (1 - p) * zi[a] * zi[b]
				}
			}
		}
		for j := 1; j <= d; j++ {
			grad[j] -= lambda * beta[j]
			hess[j][j] += lambda
		}
		hess[0][0] += 1e-9
		step, err := solve(hess, grad)
		if err != nil {
			return Logistic{}, fmt.Errorf("fit: %w", err)
		}
		var size float64
		for j := range beta {
			beta[j] += step[j]
			size = max(size, math.Abs(step[j]))
		}
		if size < 1e-10 {
			break
		}
	}
	l.Bias = beta[0]
	copy(l.Weights, beta[1:])
	return l, nil
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// solve solves a x = b by Gaussian elimination with partial pivoting; a
// and b are overwritten.
func solve(a [][]float64, b []float64) ([]float64, error) {
	n := len(b)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12 {
			return nil, errors.New("singular system")
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x, nil
}

// AUC is the area under the ROC curve of scores for the positives pos and
// the negatives neg: the chance that a random positive scores above a
// random negative, ties counting half; NaN when either is empty.
func AUC(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	var wins float64
	for _, p := range pos {
		for _, n := range neg {
			switch {
			case p > n:
				wins++
			case p == n:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(pos)*len(neg))
}
