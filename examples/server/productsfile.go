package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/declared"
)

// readProductsFile reads a products file (at most declared.MaxFileSize
// bytes; Parse refuses a larger one at its end).
func readProductsFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, declared.MaxFileSize+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return buf.Bytes(), nil
}

// declaredOptions are the reference server's rules for a declared product,
// on top of the file format's: workers run it (the server has nothing else
// to run it with), and its name is not one a product of ps has (the Go demo
// products', those of -products).
func declaredOptions(ps *settleflow.Products, single bool) declared.Options {
	return declared.Options{RequireRemote: true, Single: single, Taken: func(name string) string {
		if _, ok := ps.Get(name); ok {
			return "the server has a product of this name already (a demo product, or one of -products)"
		}
		if ps.Retired(name) {
			return "the server has a retired product of this name"
		}
		return ""
	}}
}

// loadProductsFile adds the products of the -products file at path to ps,
// every one remote. A fault of the file is an error naming the file (as
// given), the line, the column and the field.
func loadProductsFile(path string, ps *settleflow.Products) error {
	data, err := readProductsFile(path)
	if err != nil {
		return fmt.Errorf("-products: %w", err)
	}
	products, err := declared.ParseWith(path, data, declaredOptions(ps, false))
	if err != nil {
		return fmt.Errorf("-products: %w", err)
	}
	if err := declared.Register(ps, products, nil); err != nil {
		return fmt.Errorf("-products: %s: %w", path, err)
	}
	return nil
}
