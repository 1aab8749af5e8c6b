package main

// The generated llama examples, for the evaluation rows of `graphc bench`
// (the compiler package cannot import them: their tests import it).
import _ "github.com/graphc/graphc/internal/bench/models"
