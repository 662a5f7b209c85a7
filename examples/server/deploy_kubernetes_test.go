package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/guardrail-control/guard/server"
)

// The Kubernetes manifest is checked as `kubectl apply --dry-run=client --validate=strict` would, without a
// cluster: every document is decoded into the API's own Go types with Kubernetes' strict decoder (an
// unknown, misspelt or duplicated field fails), then what ties the objects together is checked: selectors
// match their pods, a Service's targetPort names a container port, every Secret reference and volume exists,
// the key file in the example Secret loads, and every replica shares one session store when there are
// several (a session whose steps land on different replicas must not escape its controls).

// k8sManifest is the objects of one manifest file, by kind and name.
type k8sManifest struct {
	deployments  map[string]*appsv1.Deployment
	statefulSets map[string]*appsv1.StatefulSet
	services     map[string]*corev1.Service
	secrets      map[string]*corev1.Secret
	policies     map[string]*networkingv1.NetworkPolicy
}

// decodeStrict decodes one YAML document into v as the API server would: duplicate keys, unknown fields
// and fields spelt in another case are errors.
func decodeStrict(doc []byte, v any) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(js, v)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return fmt.Errorf("%v", strictErrs)
	}
	return nil
}

func loadK8sManifest(t *testing.T, name string) k8sManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	m := k8sManifest{
		deployments: map[string]*appsv1.Deployment{}, statefulSets: map[string]*appsv1.StatefulSet{},
		services: map[string]*corev1.Service{}, secrets: map[string]*corev1.Secret{},
		policies: map[string]*networkingv1.NetworkPolicy{},
	}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%s document %d: %v", name, i, err)
		}
		var obj any
		var objName func() string
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			o := &appsv1.Deployment{}
			obj, objName = o, func() string { m.deployments[o.Name] = o; return o.Name }
		case "apps/v1 StatefulSet":
			o := &appsv1.StatefulSet{}
			obj, objName = o, func() string { m.statefulSets[o.Name] = o; return o.Name }
		case "v1 Service":
			o := &corev1.Service{}
			obj, objName = o, func() string { m.services[o.Name] = o; return o.Name }
		case "v1 Secret":
			o := &corev1.Secret{}
			obj, objName = o, func() string { m.secrets[o.Name] = o; return o.Name }
		case "networking.k8s.io/v1 NetworkPolicy":
			o := &networkingv1.NetworkPolicy{}
			obj, objName = o, func() string { m.policies[o.Name] = o; return o.Name }
		default:
			t.Fatalf("%s document %d: %s %s is not a kind this test knows; add it", name, i, head.APIVersion, head.Kind)
		}
		if err := decodeStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s document %d (%s): %v", name, i, head.Kind, err)
		}
		if objName() == "" {
			t.Errorf("%s document %d (%s) has no name", name, i, head.Kind)
		}
	}
	return m
}

// selects reports whether selector (matchLabels only) selects a pod with labels.
func selects(selector map[string]string, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// k8sWorkload is what the checks read of a Deployment or a StatefulSet.
type k8sWorkload struct {
	kind, name string
	replicas   int32
	selector   map[string]string
	pod        corev1.PodTemplateSpec
}

func (m k8sManifest) workloads() []k8sWorkload {
	var out []k8sWorkload
	for n, d := range m.deployments {
		out = append(out, k8sWorkload{"Deployment", n, ptrOr(d.Spec.Replicas, 1), d.Spec.Selector.MatchLabels, d.Spec.Template})
	}
	for n, s := range m.statefulSets {
		out = append(out, k8sWorkload{"StatefulSet", n, ptrOr(s.Spec.Replicas, 1), s.Spec.Selector.MatchLabels, s.Spec.Template})
	}
	return out
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func TestDeployKubernetes(t *testing.T) {
	m := loadK8sManifest(t, "kubernetes.yaml")
	// The Secret is in a file of its own: applying kubernetes.yaml again must never overwrite the real one.
	if len(m.secrets) > 0 {
		t.Fatal("kubernetes.yaml holds a Secret: `kubectl apply -f` would overwrite the one created with kubectl create secret")
	}
	ex := loadK8sManifest(t, "kubernetes-secret.example.yaml")
	if len(ex.secrets) != 1 {
		t.Fatalf("kubernetes-secret.example.yaml: %d Secrets, want 1", len(ex.secrets))
	}
	var secret *corev1.Secret
	for _, s := range ex.secrets {
		secret = s
	}
	raw, _ := os.ReadFile(filepath.Join(repoRoot, "deploy", "kubernetes.yaml"))
	create := "kubectl create secret generic " + secret.Name
	if !strings.Contains(string(raw), create) {
		t.Errorf("kubernetes.yaml's header does not say how to create the Secret %s", secret.Name)
	}
	for k := range secret.StringData {
		flag := "--from-literal=" + k + "="
		if strings.Contains(k, ".") {
			flag = "--from-file=" + k + "="
		}
		if !strings.Contains(string(raw), flag) {
			t.Errorf("kubernetes.yaml's %q does not create the Secret's key %s (%s...)", create, k, flag)
		}
	}
	if !strings.HasPrefix(secret.StringData["DATABASE_URL"], "postgres://") {
		t.Errorf("the Secret's DATABASE_URL is not a PostgreSQL URL")
	}

	// Every workload: its selector selects its own pods; every Service selects a workload and names one of
	// its ports; every NetworkPolicy selects a workload and admits one.
	for _, w := range m.workloads() {
		if !selects(w.selector, w.pod.Labels) {
			t.Errorf("%s %s: selector %v does not select its pod template's labels %v", w.kind, w.name, w.selector, w.pod.Labels)
		}
	}
	for _, svc := range m.services {
		var target *k8sWorkload
		for _, w := range m.workloads() {
			if selects(svc.Spec.Selector, w.pod.Labels) {
				target = &w
			}
		}
		if target == nil {
			t.Errorf("Service %s selects no workload of the manifest (%v)", svc.Name, svc.Spec.Selector)
			continue
		}
		for _, p := range svc.Spec.Ports {
			if !containerPort(target.pod.Spec, p.TargetPort) {
				t.Errorf("Service %s port %s: targetPort %s is no port of %s %s", svc.Name, p.Name, p.TargetPort.String(), target.kind, target.name)
			}
		}
	}
	for _, np := range m.policies {
		var selected, admitted bool
		for _, w := range m.workloads() {
			selected = selected || selects(np.Spec.PodSelector.MatchLabels, w.pod.Labels)
			for _, in := range np.Spec.Ingress {
				for _, from := range in.From {
					admitted = admitted || (from.PodSelector != nil && selects(from.PodSelector.MatchLabels, w.pod.Labels))
				}
			}
		}
		if !selected || !admitted {
			t.Errorf("NetworkPolicy %s: selects a workload %v, admits one %v", np.Name, selected, admitted)
		}
	}

	dep := m.deployments["guard"]
	svc := m.services["guard"]
	if dep == nil || svc == nil {
		t.Fatalf("kubernetes.yaml needs the Deployment and the Service guard")
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	hs := probeServer(t)
	for _, c := range append(append([]corev1.Container(nil), pod.InitContainers...), pod.Containers...) {
		where := "container " + c.Name
		checkCommand(t, where+" args", c.Args)
		// The files the container sees: each volume mount of a Secret, with the Secret's values.
		files := map[string]string{}
		for _, vm := range c.VolumeMounts {
			v, ok := volumes[vm.Name]
			switch {
			case !ok:
				t.Errorf("%s mounts volume %s, which the pod does not define", where, vm.Name)
			case v.Secret == nil || v.Secret.SecretName != secret.Name:
				t.Errorf("%s: volume %s is not the Secret %s", where, vm.Name, secret.Name)
			default:
				for _, it := range v.Secret.Items {
					val, ok := secret.StringData[it.Key]
					if !ok {
						t.Errorf("%s: volume %s takes key %s, which the Secret does not have", where, vm.Name, it.Key)
					}
					files[filepath.Join(vm.MountPath, it.Path)] = val
				}
			}
		}
		env := map[string]string{}
		for _, e := range c.Env {
			checkEnvName(t, where, e.Name)
			switch {
			case e.ValueFrom == nil:
				env[e.Name] = e.Value
			case e.ValueFrom.SecretKeyRef != nil:
				ref := e.ValueFrom.SecretKeyRef
				v, ok := secret.StringData[ref.Key]
				if ref.Name != secret.Name || !ok {
					t.Errorf("%s: %s refers to secret %s key %s, which the manifest does not define", where, e.Name, ref.Name, ref.Key)
				}
				env[e.Name] = v
			default:
				t.Errorf("%s: %s has no value", where, e.Name)
			}
		}
		// The key file must be one of the mounted files, and load as the server loads it.
		if path := env["GUARD_API_KEYS_FILE"]; path != "" {
			content, ok := files[path]
			if !ok {
				t.Errorf("%s: GUARD_API_KEYS_FILE=%s is not a file the container mounts (%v)", where, path, files)
			} else if keys, err := server.ParseKeys([]byte(content)); err != nil || len(keys) == 0 {
				t.Errorf("%s: the example Secret's key file does not load: %v (%d keys)", where, err, len(keys))
			}
			local := filepath.Join(t.TempDir(), "keys.json")
			if err := os.WriteFile(local, []byte(content), 0o400); err != nil {
				t.Fatal(err)
			}
			env["GUARD_API_KEYS_FILE"] = local
		}
		if _, err := LoadConfig(func(k string) string { return env[k] }); err != nil {
			t.Errorf("%s: the environment does not load: %v", where, err)
		}
		if len(c.Ports) == 0 {
			continue
		}
		// Several replicas share one session store: a Redis URL whose host is a Service of the manifest.
		if ptrOr(dep.Spec.Replicas, 1) > 1 {
			u, err := url.Parse(env["GUARD_SESSION_STORE"])
			if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
				t.Errorf("%s: %d replicas without a shared session store (GUARD_SESSION_STORE=%q): a session spread over replicas escapes its controls",
					where, *dep.Spec.Replicas, env["GUARD_SESSION_STORE"])
			} else if rs := m.services[u.Hostname()]; rs == nil {
				t.Errorf("%s: GUARD_SESSION_STORE host %s is not a Service of the manifest", where, u.Hostname())
			} else if len(rs.Spec.Ports) == 0 || u.Port() != strconv.Itoa(int(rs.Spec.Ports[0].Port)) {
				t.Errorf("%s: GUARD_SESSION_STORE port %s is not the Service %s's port", where, u.Port(), rs.Name)
			}
		}
		port := c.Ports[0]
		if strconv.Itoa(int(port.ContainerPort)) != env["PORT"] || env["HOST"] != "0.0.0.0" || env["GUARD_API_KEY_ENABLED"] != "true" {
			t.Errorf("%s: containerPort %d, PORT=%s, HOST=%s, GUARD_API_KEY_ENABLED=%s", where, port.ContainerPort, env["PORT"], env["HOST"], env["GUARD_API_KEY_ENABLED"])
		}
		for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			want := map[string]string{"liveness": "/health", "readiness": "/ready"}[name]
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want {
				t.Errorf("%s: %s probe %+v, want httpGet %s", where, name, p, want)
				continue
			}
			if !containerPort(corev1.PodSpec{Containers: []corev1.Container{c}}, p.HTTPGet.Port) {
				t.Errorf("%s: %s probe port %s is not the container's port", where, name, p.HTTPGet.Port.String())
			}
			checkProbe(t, hs, where+" "+name, p.HTTPGet.Path)
		}
		ann := dep.Spec.Template.Annotations
		if ann["prometheus.io/port"] != env["PORT"] {
			t.Errorf("prometheus.io/port %s, PORT %s", ann["prometheus.io/port"], env["PORT"])
		}
		checkProbe(t, hs, "prometheus.io/path", ann["prometheus.io/path"])
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != port.Name {
			t.Errorf("the Service's targetPort is not the container's port %q", port.Name)
		}
	}
	if len(pod.InitContainers) != 1 || strings.Join(pod.InitContainers[0].Args, " ") != "migrate" ||
		strings.Join(pod.Containers[0].Args, " ") != "serve" {
		t.Errorf("want an init container that migrates and a container that serves")
	}
}

// containerPort reports whether port (a name or a number) is a port of one of the pod's containers.
func containerPort(pod corev1.PodSpec, port intstr.IntOrString) bool {
	for _, c := range pod.Containers {
		for _, p := range c.Ports {
			if (port.Type == intstr.String && port.StrVal == p.Name) || (port.Type == intstr.Int && port.IntVal == p.ContainerPort) {
				return true
			}
		}
	}
	return false
}

// TestDeployKubernetesStrict proves the strict decoding refuses what kubectl --validate=strict refuses.
func TestDeployKubernetesStrict(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":   "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selectr: {a: b}}\n",
		"other case":      "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {Selector: {a: b}}\n",
		"duplicate field": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selector: {a: b}, selector: {c: d}}\n",
		"wrong type":      "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: 80}\n",
	} {
		if err := decodeStrict([]byte(doc), &corev1.Service{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := decodeStrict([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selector: {a: b}}\n"), &corev1.Service{}); err != nil {
		t.Errorf("a valid Service: %v", err)
	}
}
