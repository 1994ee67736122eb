// Command migrate opens each index named as a writer and closes it, so its
// migrations and layout rebuilds run (bench cache copies between schemas).
package main

import (
	"context"
	"log"
	"os"

	"github.com/vaultask/vaultask/index"
)

func main() {
	for _, p := range os.Args[1:] {
		s, err := index.Open(context.Background(), index.Options{Path: p, Space: index.EmbeddingSpace{Model: "builtin/use-lite", Dim: 512},
			Sensitivity: index.Classifier{PersonalPaths: []string{"Personal/**", "Journal/**"}}})
		if err != nil {
			log.Fatal(err)
		}
		if err := s.Close(); err != nil {
			log.Fatal(err)
		}
		log.Print("migrated ", p)
	}
}
