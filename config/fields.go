package config

import (
	"reflect"
	"strings"
	"time"
)

// field is one configuration key, found by reflection over Config's yaml tags
// so that the file layers, the environment layer, String and LogValue all
// agree on the same names.
type field struct {
	section, key string // yaml names, such as "retrieval" and "final_top_k"
	index        []int  // reflect path from Config to the field
	typ          reflect.Type
}

var (
	secretType   = reflect.TypeFor[Secret]()
	durationType = reflect.TypeFor[time.Duration]()
)

// fields lists every key in declaration order; the maps find one by its
// yaml path ("retrieval.final_top_k") or environment variable name, and
// sections holds the section names.
var fields, fieldsByPath, fieldsByEnv, sections = collectFields()

func collectFields() ([]field, map[string]field, map[string]field, map[string]bool) {
	var all []field
	byPath := map[string]field{}
	byEnv := map[string]field{}
	names := map[string]bool{}
	root := reflect.TypeFor[Config]()
	for i := range root.NumField() {
		section := root.Field(i)
		sectionName := yamlName(section)
		names[sectionName] = true
		for j := range section.Type.NumField() {
			key := section.Type.Field(j)
			f := field{
				section: sectionName,
				key:     yamlName(key),
				index:   []int{i, j},
				typ:     key.Type,
			}
			all = append(all, f)
			byPath[f.path()] = f
			byEnv[EnvName(f.path())] = f
		}
	}
	return all, byPath, byEnv, names
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// path is the key's name in errors and output: "retrieval.final_top_k".
func (f field) path() string { return f.section + "." + f.key }

func (f field) secret() bool { return f.typ == secretType }

// value is the key's settable field in c.
func (f field) value(c *Config) reflect.Value {
	return reflect.ValueOf(c).Elem().FieldByIndex(f.index)
}

// want describes the values the key accepts, for type errors.
func (f field) want() string {
	switch {
	case f.typ == durationType:
		return "a duration like 90m or 1h30m"
	case f.typ.Kind() == reflect.Int:
		return "an integer"
	case f.typ.Kind() == reflect.Float64:
		return "a number"
	case f.typ.Kind() == reflect.Bool:
		return "a boolean (true or false)"
	case f.typ.Kind() == reflect.Slice:
		return "a list of strings"
	}
	return "a string"
}
