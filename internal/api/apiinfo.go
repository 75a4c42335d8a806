package api

import "context"

func (s *Server) registerInfo() {
	s.methods["apiinfo.version"] = &method{call: func(context.Context, *call) (any, error) { return Version, nil }}
}
