// Package main reads PromQL expressions, one JSON string per line on stdin, and answers for each, one
// JSON object per line on stdout, what Prometheus' own parser makes of it: the error, or the metric
// names the expression selects and the label names it matches or groups by.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

type answer struct {
	Expr    string   `json:"expr"`
	Error   string   `json:"error,omitempty"`
	Metrics []string `json:"metrics"`
	Labels  []string `json:"labels"`
}

func inspect(expr string) answer {
	out := answer{Expr: expr, Metrics: []string{}, Labels: []string{}}
	parsed, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	metrics := map[string]bool{}
	names := map[string]bool{}
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			for _, matcher := range n.LabelMatchers {
				if matcher.Name == labels.MetricName {
					metrics[matcher.Value] = true
				} else {
					names[matcher.Name] = true
				}
			}
		case *parser.AggregateExpr:
			for _, name := range n.Grouping {
				names[name] = true
			}
		}
		return nil
	})
	out.Metrics = sorted(metrics)
	out.Labels = sorted(names)
	return out
}

func sorted(set map[string]bool) []string {
	list := make([]string, 0, len(set))
	for name := range set {
		list = append(list, name)
	}
	sort.Strings(list)
	return list
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var expr string
		if err := json.Unmarshal(in.Bytes(), &expr); err != nil {
			fmt.Fprintln(os.Stderr, "promql: each line must be a JSON string:", err)
			os.Exit(2)
		}
		if err := out.Encode(inspect(expr)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
