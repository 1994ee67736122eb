package vault

// Sensitivity values. Every note and chunk is one of these; a request that
// may use the web sees only SensitivityOpen.
const (
	SensitivityOpen     = "open"
	SensitivityPersonal = "personal"
)

// FrontmatterKey is the frontmatter key that overrides a note's sensitivity
// when the index is given no other.
const FrontmatterKey = "sensitivity"
