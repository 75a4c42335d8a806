package auth

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

// pgBackends maps a test running on PostgreSQL (its name, a prefix of
// its subtests') to its cluster: openEnv opens its stores there.
var pgBackends sync.Map // string → *hatest.Cluster

// pgSchemas numbers the test stores' schemas.
var pgSchemas atomic.Int64

// pgOptions returns the PostgreSQL placement of a new store for t, nil
// when t runs on SQLite.
func pgOptions(t testing.TB) *sqlitedb.PG {
	var c *hatest.Cluster
	pgBackends.Range(func(k, v any) bool {
		if name := k.(string); t.Name() == name || strings.HasPrefix(t.Name(), name+"/") {
			c = v.(*hatest.Cluster)
		}
		return c == nil
	})
	if c == nil {
		return nil
	}
	return &sqlitedb.PG{Pool: c.Node.Pool(), Fence: c.Lease.FenceSQL, Schema: fmt.Sprintf("auth%d", pgSchemas.Add(1))}
}

// pgBehaviour are the store's behavioural tests that run on PostgreSQL
// too: those that open their stores with openEnv and do not touch the
// SQLite file.
var pgBehaviour = []struct {
	name string
	fn   func(*testing.T)
}{
	{"TestConcurrentUse", TestConcurrentUse},
	{"TestConcurrentLogoutAndCacheFill", TestConcurrentLogoutAndCacheFill},
	{"TestConcurrentFailuresBlock", TestConcurrentFailuresBlock},
	{"TestCloseWaitsForCalls", TestCloseWaitsForCalls},
	{"TestNoSecretsLogged", TestNoSecretsLogged},
	{"TestConfigAndPolicies", TestConfigAndPolicies},
	{"TestLoginAuthenticateLogout", TestLoginAuthenticateLogout},
	{"TestAuthenticateMalformed", TestAuthenticateMalformed},
	{"TestUnknownUserSameAsWrongPassword", TestUnknownUserSameAsWrongPassword},
	{"TestLockout", TestLockout},
	{"TestLockoutAfterExpiredBlockStartsOver", TestLockoutAfterExpiredBlockStartsOver},
	{"TestUpdatePasswordLiftsBlock", TestUpdatePasswordLiftsBlock},
	{"TestUnblockUsers", TestUnblockUsers},
	{"TestFailDelay", TestFailDelay},
	{"TestFailDelayHonoursContext", TestFailDelayHonoursContext},
	{"TestSessionIdleExpiry", TestSessionIdleExpiry},
	{"TestSessionsSurviveReopen", TestSessionsSurviveReopen},
	{"TestSessionAccessWrites", TestSessionAccessWrites},
	{"TestSessionIDNotStored", TestSessionIDNotStored},
	{"TestRehashOnLogin", TestRehashOnLogin},
	{"TestCorruptHashFailsLikeWrongPassword", TestCorruptHashFailsLikeWrongPassword},
	{"TestDefaultRoles", TestDefaultRoles},
	{"TestRolesCRUD", TestRolesCRUD},
	{"TestClosed", TestClosed},
	{"TestTokens", TestTokens},
	{"TestTokenExpiry", TestTokenExpiry},
	{"TestTokenWithoutSecret", TestTokenWithoutSecret},
	{"TestCreateTokenValidation", TestCreateTokenValidation},
	{"TestUpdateToken", TestUpdateToken},
	{"TestUserGroupsCRUD", TestUserGroupsCRUD},
	{"TestUserGroupsErrors", TestUserGroupsErrors},
	{"TestRightsCombine", TestRightsCombine},
	{"TestRightsCacheFollowsChanges", TestRightsCacheFollowsChanges},
	{"TestDisabledUserGroup", TestDisabledUserGroup},
	{"TestRightsCacheConcurrentChanges", TestRightsCacheConcurrentChanges},
	{"TestRightsStaleFillNotCached", TestRightsStaleFillNotCached},
	{"TestCreateUserValidation", TestCreateUserValidation},
	{"TestUsersList", TestUsersList},
	{"TestUpdatePasswordEndsSessions", TestUpdatePasswordEndsSessions},
	{"TestDeleteUser", TestDeleteUser},
	{"TestSetRole", TestSetRole},
}

// TestPostgresBehaviour runs pgBehaviour on PostgreSQL (a real
// PostgreSQL 15, every write fenced by an active HA node's lease).
func TestPostgresBehaviour(t *testing.T) {
	c := hatest.Start(t, "auth-a")
	for _, tc := range pgBehaviour {
		t.Run(tc.name, func(t *testing.T) {
			pgBackends.Store(t.Name(), c)
			defer pgBackends.Delete(t.Name())
			tc.fn(t)
		})
	}
}
