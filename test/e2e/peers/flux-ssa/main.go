// Command flux-ssa applies the YAML files of a directory to one cluster with Flux's server-side apply
// manager (github.com/fluxcd/pkg/ssa), as Flux's kustomize-controller applies a Kustomization: every
// object staged (CRDs, ClusterRoles and Namespaces first, waited for), each one checked for drift by a
// server-side dry run and applied only when it differs. It prints one JSON line: how many objects, what
// the change set says about them, the wall-clock seconds and the CPU seconds of this process.
//
// It is the peer side of gitfleet's apply comparison (bench/peers.bench.ts, test/e2e/peers.e2e.ts).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

type result struct {
	Objects    int            `json:"objects"`
	Actions    map[string]int `json:"actions"`
	Seconds    float64        `json:"seconds"`
	CPUSeconds float64        `json:"cpuSeconds"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig file")
	kubeContext := flag.String("context", "", "the context to use (default: the current one)")
	dir := flag.String("dir", "", "the directory of YAML files to apply")
	concurrency := flag.Int("concurrency", 8, "objects checked and applied at once")
	owner := flag.String("field-manager", "kustomize-controller", "the field manager")
	flag.Parse()
	if *kubeconfig == "" || *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: flux-ssa --kubeconfig FILE --dir DIR [--context NAME] [--concurrency N]")
		os.Exit(64)
	}
	out, err := run(*kubeconfig, *kubeContext, *dir, *concurrency, *owner)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flux-ssa:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

func run(kubeconfig, kubeContext, dir string, concurrency int, owner string) (*result, error) {
	objects, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext},
	).ClientConfig()
	if err != nil {
		return nil, err
	}
	// No client-side rate limit: every tool in the comparison is bounded by its concurrency alone.
	cfg.QPS = -1
	cfg.RateLimiter = nil
	manager, err := newManager(cfg, owner)
	if err != nil {
		return nil, err
	}
	manager.SetConcurrency(concurrency)
	start := time.Now()
	changes, err := manager.ApplyAllStaged(context.Background(), objects, ssa.DefaultApplyOptions())
	if err != nil {
		return nil, err
	}
	actions := map[string]int{}
	for _, entry := range changes.Entries {
		actions[string(entry.Action)]++
	}
	return &result{
		Objects:    len(objects),
		Actions:    actions,
		Seconds:    time.Since(start).Seconds(),
		CPUSeconds: cpuSeconds(),
	}, nil
}

func newManager(cfg *rest.Config, owner string) (*ssa.ResourceManager, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	kube, err := client.New(cfg, client.Options{Mapper: mapper})
	if err != nil {
		return nil, err
	}
	poller := polling.NewStatusPoller(kube, mapper, polling.Options{})
	return ssa.NewResourceManager(kube, poller, ssa.Owner{Field: owner, Group: "kustomize.toolkit.fluxcd.io"}), nil
}

// Every object of every .yaml file under dir, in path order.
func readDir(dir string) ([]*unstructured.Unstructured, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, entry os.DirEntry, err error) error {
		if err == nil && !entry.IsDir() && strings.HasSuffix(path, ".yaml") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var objects []*unstructured.Unstructured
	for _, path := range paths {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		read, err := utils.ReadObjects(file)
		file.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objects = append(objects, read...)
	}
	return objects, nil
}

// User and system CPU seconds this process has used.
func cpuSeconds() float64 {
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) != nil {
		return 0
	}
	seconds := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return seconds(usage.Utime) + seconds(usage.Stime)
}
