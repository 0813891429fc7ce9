package api

// ServedRoute is one operation the router serves, for the tests that walk
// them all: its method and its full path (the API's prefix, then the
// route's path with its :name parameters).
type ServedRoute struct{ Method, Path string }

// ServedRoutes lists every operation s serves, on every API, as the route
// table registered them.
func (s *Server) ServedRoutes() []ServedRoute {
	out := make([]ServedRoute, 0, len(s.routes))
	for _, rt := range s.routes {
		out = append(out, ServedRoute{rt.method, rt.api.prefix() + rt.path})
	}
	return out
}
