// Command karmada-oracle runs Karmada's own scheduler (core.NewGenericScheduler of
// github.com/karmada-io/karmada v1.16.0, with its in-tree plugins and general estimator) on
// scheduling cases read as JSON lines from stdin, and writes one JSON line per case: the replicas
// per cluster Karmada suggests, or the error it returns. gitfleet's second test tier compares its
// own scheduler's decisions with these.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	"github.com/karmada-io/karmada/pkg/scheduler/cache"
	"github.com/karmada-io/karmada/pkg/scheduler/core"
	"github.com/karmada-io/karmada/pkg/scheduler/framework/plugins"
)

// One case: clusters with the replicas each can still fit (one CPU a replica), the total, the
// division and what each cluster holds now.
type caseInput struct {
	Clusters []struct {
		Name string `json:"name"`
		Free int64  `json:"free"`
	} `json:"clusters"`
	Replicas   int32            `json:"replicas"`
	Division   string           `json:"division"` // static, dynamic or aggregated
	Weights    map[string]int64 `json:"weights"`
	Current    map[string]int32 `json:"current"`
	Rebalance  bool             `json:"rebalance"`
	UID        string           `json:"uid"`
}

type caseOutput struct {
	Clusters map[string]int32 `json:"clusters,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// A fixed list of clusters, as the scheduler's lister reads them.
type lister struct{ clusters []*clusterv1alpha1.Cluster }

func (l lister) List(labels.Selector) ([]*clusterv1alpha1.Cluster, error) { return l.clusters, nil }
func (l lister) Get(name string) (*clusterv1alpha1.Cluster, error) {
	for _, c := range l.clusters {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("cluster %s not found", name)
}

func cluster(name string, free int64) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: clusterv1alpha1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
			APIEnablements: []clusterv1alpha1.APIEnablement{{
				GroupVersion: "apps/v1",
				Resources:    []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}},
			}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{
				Allocatable: corev1.ResourceList{
					corev1.ResourceCPU:  *resource.NewQuantity(free, resource.DecimalSI),
					corev1.ResourcePods: *resource.NewQuantity(100000, resource.DecimalSI),
				},
			},
		},
	}
}

func run(in caseInput) caseOutput {
	clusters := make([]*clusterv1alpha1.Cluster, 0, len(in.Clusters))
	names := make([]string, 0, len(in.Clusters))
	for _, c := range in.Clusters {
		clusters = append(clusters, cluster(c.Name, c.Free))
		names = append(names, c.Name)
	}
	scheduler, err := core.NewGenericScheduler(cache.NewCache(lister{clusters}), plugins.NewInTreeRegistry())
	if err != nil {
		return caseOutput{Error: err.Error()}
	}
	scheduling := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}
	switch in.Division {
	case "aggregated":
		scheduling.ReplicaDivisionPreference = policyv1alpha1.ReplicaDivisionPreferenceAggregated
	case "dynamic":
		scheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
	default:
		weights := []policyv1alpha1.StaticClusterWeight{}
		keys := make([]string, 0, len(in.Weights))
		for name := range in.Weights {
			keys = append(keys, name)
		}
		sort.Strings(keys)
		for _, name := range keys {
			weights = append(weights, policyv1alpha1.StaticClusterWeight{
				TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{name}},
				Weight:        in.Weights[name],
			})
		}
		scheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: weights}
	}
	current := []workv1alpha2.TargetCluster{}
	for _, name := range names {
		if n := in.Current[name]; n > 0 {
			current = append(current, workv1alpha2.TargetCluster{Name: name, Replicas: n})
		}
	}
	spec := &workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{
			APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: types.UID(in.UID),
		},
		Replicas: in.Replicas,
		ReplicaRequirements: &workv1alpha2.ReplicaRequirements{
			ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(1, resource.DecimalSI)},
		},
		Placement: &policyv1alpha1.Placement{
			ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: names},
			ReplicaScheduling: scheduling,
		},
		Clusters: current,
	}
	status := &workv1alpha2.ResourceBindingStatus{LastScheduledTime: &metav1.Time{Time: time.Unix(1000, 0)}}
	if in.Rebalance {
		spec.RescheduleTriggeredAt = &metav1.Time{Time: time.Unix(2000, 0)}
	}
	result, err := scheduler.Schedule(context.Background(), spec, status, &core.ScheduleAlgorithmOption{})
	if err != nil {
		return caseOutput{Error: err.Error()}
	}
	out := caseOutput{Clusters: map[string]int32{}}
	for _, target := range result.SuggestedClusters {
		if target.Replicas > 0 {
			out.Clusters[target.Name] = target.Replicas
		}
	}
	return out
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	encoder := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var in caseInput
		if err := json.Unmarshal(scanner.Bytes(), &in); err != nil {
			_ = encoder.Encode(caseOutput{Error: "bad case: " + err.Error()})
			continue
		}
		_ = encoder.Encode(run(in))
	}
}
