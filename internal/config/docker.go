package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

var (
	// containerNamePattern is Docker's rule for container names.
	containerNamePattern = lazyRegexp(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	// containerPortPattern is a container port with an optional protocol.
	containerPortPattern = lazyRegexp(`^([0-9]{1,5})(/(tcp|udp|sctp))?$`)
)

// docker resolves seed 001's managed Docker form into the equivalent
// `docker run` launch. It reports whether the launch is usable.
func (r *resolver) docker(s *rawServer, f *rawField, srv *Server) bool {
	base := s.path(f.key)
	n := f.val
	d := &Docker{}
	ok := true
	if p := n.get("image"); p == nil {
		ok = false // reported as missing by the schema
	} else if v, good := r.expandNode(p.value, base+".image"); !good {
		ok = false
	} else if v == "" || strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t\r\n") {
		r.ps.add(p.value.pos, base+".image", fmt.Sprintf("%q is not an image name", v), "name an image such as mcp/github or ghcr.io/org/server:1.0", nil)
		ok = false
	} else {
		d.Image = v
	}
	if p := n.get("container_name"); p != nil && p.value.kind != kindNull {
		field := base + ".container_name"
		if v, good := r.expandNode(p.value, field); !good {
			ok = false
		} else if !containerNamePattern().MatchString(v) {
			r.ps.add(p.value.pos, field, fmt.Sprintf("%q is not a valid container name", v), "start with a letter or digit and use only letters, digits, _, . and -", nil)
			ok = false
		} else {
			d.ContainerName = v
		}
	}
	if p := n.get("command"); p != nil {
		for i, it := range present(p.value) {
			v, good := r.expandNode(it, fmt.Sprintf("%s.command[%d]", base, i))
			ok = ok && good
			d.Command = append(d.Command, v)
		}
	}
	if p := n.get("ports"); p != nil && s.typed.Docker != nil {
		d.Ports = map[string]int{}
		for _, pp := range p.value.pairs {
			m := containerPortPattern().FindStringSubmatch(pp.key)
			if m == nil || !validPort(m[1]) {
				r.ps.add(pp.keyPos, base+".ports."+pp.key, fmt.Sprintf("%q is not a container port", pp.key), `use a port number, optionally with /tcp or /udp, e.g. "8080": 8080`, nil)
				ok = false
				continue
			}
			d.Ports[pp.key] = s.typed.Docker.Ports[pp.key] // within 1-65535, as the schema says
		}
	}
	srv.Docker = d
	if !ok {
		return false
	}
	srv.Command = "docker"
	srv.Args = dockerArgs(d, srv.Env)
	return true
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}

// dockerArgs builds `run --rm -i [--name C] [-p host:container ...]
// [-e KEY ...] IMAGE [command...]`. Each env key is passed by name only:
// docker reads its value from its own environment, which is the server's
// env, so values never appear on a command line.
func dockerArgs(d *Docker, env map[string]string) []string {
	args := []string{"run", "--rm", "-i"}
	if d.ContainerName != "" {
		args = append(args, "--name", d.ContainerName)
	}
	ports := make([]string, 0, len(d.Ports))
	for k := range d.Ports {
		ports = append(ports, k)
	}
	slices.SortFunc(ports, func(a, b string) int {
		na, _ := strconv.Atoi(strings.SplitN(a, "/", 2)[0])
		nb, _ := strconv.Atoi(strings.SplitN(b, "/", 2)[0])
		if na != nb {
			return na - nb
		}
		return strings.Compare(a, b)
	})
	for _, k := range ports {
		// Published on loopback only: a managed server is for this machine.
		args = append(args, "-p", fmt.Sprintf("127.0.0.1:%d:%s", d.Ports[k], k))
	}
	for _, k := range sortedKeys(env) {
		args = append(args, "-e", k)
	}
	args = append(args, d.Image)
	return append(args, d.Command...)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
