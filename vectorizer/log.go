package vectorizer

// Log attribute keys of package vectorizer.
const (
	logComponent = "component"
	keyErr       = "err"
	keyModel     = "model"
)
