package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// UserRole is a Zabbix 6.0 user role: a user type (Role) and the rules
// that narrow what its users may do. Every user has exactly one.
type UserRole struct {
	ID       uint64
	Name     string
	Type     Role
	ReadOnly bool // the super admin role 3: it cannot be changed
	Rules    RoleRules
}

// RoleRules are a role's rules in the form they are stored, which is
// Zabbix's: a default per kind of element, the elements whose status
// differs from it, the services a role may read and change, and which
// API methods its users may call. Effective (UI, Action) reads them per
// element; the full list of a user type's elements is UIElements and
// RoleActions.
type RoleRules struct {
	UIDefault int            `json:"ui.default_access"`
	UI        map[string]int `json:"ui,omitempty"`
	// Services: mode 1 all, 0 those of the list or tag.
	ServicesRead      int      `json:"services.read"`
	ServicesReadList  []uint64 `json:"services.read.list,omitempty"`
	ServicesReadTag   RuleTag  `json:"services.read.tag"`
	ServicesWrite     int      `json:"services.write"`
	ServicesWriteList []uint64 `json:"services.write.list,omitempty"`
	ServicesWriteTag  RuleTag  `json:"services.write.tag"`
	// Modules: Peregrine has no frontend modules; only the default is
	// kept.
	ModulesDefault int `json:"modules.default_access"`
	// API: access 0 refuses every method that needs a login; mode 0 makes
	// API a deny list, 1 an allow list ("host.get", "host.*", "*.get",
	// "*").
	APIAccess      int            `json:"api.access"`
	APIMode        int            `json:"api.mode"`
	API            []string       `json:"api,omitempty"`
	ActionsDefault int            `json:"actions.default_access"`
	Actions        map[string]int `json:"actions,omitempty"`
}

// RuleTag is a service tag of the services.read.tag and
// services.write.tag rules.
type RuleTag struct {
	Tag   string `json:"tag"`
	Value string `json:"value"`
}

// UIStatus is the status (1 enabled, 0 disabled) of UI element name.
func (r *RoleRules) UIStatus(name string) int {
	if v, ok := r.UI[name]; ok {
		return v
	}
	return r.UIDefault
}

// ActionStatus is the status (1 allowed, 0 not) of action name.
func (r *RoleRules) ActionStatus(name string) int {
	if v, ok := r.Actions[name]; ok {
		return v
	}
	return r.ActionsDefault
}

// The UI elements and actions of Zabbix 6.0's roles, by the least user
// type they are available to, in the order role.get lists them
// (recorded from Zabbix 6.0.14's default roles).
var (
	uiUser = []string{"inventory.hosts", "inventory.overview", "monitoring.dashboard", "monitoring.hosts",
		"monitoring.latest_data", "monitoring.maps", "monitoring.problems", "reports.availability_report",
		"reports.top_triggers", "services.services", "services.sla_report"}
	uiAdmin = []string{"configuration.actions", "configuration.discovery", "configuration.host_groups",
		"configuration.hosts", "configuration.maintenance", "configuration.templates", "monitoring.discovery",
		"reports.notifications", "reports.scheduled_reports", "services.actions", "services.sla"}
	uiSuper = []string{"administration.authentication", "administration.general", "administration.media_types",
		"administration.proxies", "administration.queue", "administration.scripts", "administration.user_groups",
		"administration.user_roles", "administration.users", "configuration.event_correlation",
		"reports.action_log", "reports.audit", "reports.system_info"}
	actionsUser = []string{"edit_dashboards", "edit_maps", "acknowledge_problems", "close_problems",
		"change_severity", "add_problem_comments", "execute_scripts", "manage_api_tokens"}
	actionsAdmin = []string{"edit_maintenance", "manage_scheduled_reports", "manage_sla"}
)

// UIElements returns the UI elements a role of type t has, in
// role.get's order. The caller must not modify the result.
func UIElements(t Role) []string {
	switch t {
	case RoleAdmin:
		return uiByType[1]
	case RoleSuperAdmin:
		return uiByType[2]
	}
	return uiUser
}

// RoleActions returns the actions a role of type t has, in role.get's
// order. The caller must not modify the result.
func RoleActions(t Role) []string {
	if t >= RoleAdmin {
		return actionsByType[1]
	}
	return actionsUser
}

var (
	uiByType      = [3][]string{uiUser, slices.Concat(uiUser, uiAdmin), slices.Concat(uiUser, uiAdmin, uiSuper)}
	actionsByType = [2][]string{actionsUser, slices.Concat(actionsUser, actionsAdmin)}
)

// RoleChange changes the fields of a role that are set: nil keeps the
// value. Rules change as Zabbix 6.0 changes them: the elements listed
// in UI and Actions take the given status, the others keep the status
// they had (whatever the new default), and elements a new type adds get
// the default; lists and tags replace the stored ones.
type RoleChange struct {
	ID    uint64
	Name  *string
	Type  *Role
	Rules *RulesChange
}

// RulesChange is the "rules" of role.create or role.update: nil members
// are not given.
type RulesChange struct {
	UI, Actions                         map[string]int
	UIDefault, ActionsDefault           *int
	ServicesRead, ServicesWrite         *int
	ServicesReadList, ServicesWriteList *[]uint64
	ServicesReadTag, ServicesWriteTag   *RuleTag
	ModulesDefault, APIAccess, APIMode  *int
	API                                 *[]string
}

// NewRoleRules are the rules of a role created without rules: Zabbix
// 6.0's defaults (everything allowed, services readable, and writable
// for admins).
func NewRoleRules(t Role) RoleRules {
	r := RoleRules{UIDefault: 1, ServicesRead: 1, ModulesDefault: 1, APIAccess: 1, ActionsDefault: 1}
	if t >= RoleAdmin {
		r.ServicesWrite = 1
	}
	return r
}

// Apply returns the rules after ch, for a role whose type goes from
// oldType to newType (see RoleChange). ch may be nil.
func (r RoleRules) Apply(oldType, newType Role, ch *RulesChange) RoleRules {
	if ch == nil {
		ch = &RulesChange{}
	}
	out := r
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&out.UIDefault, ch.UIDefault)
	setInt(&out.ActionsDefault, ch.ActionsDefault)
	setInt(&out.ServicesRead, ch.ServicesRead)
	setInt(&out.ServicesWrite, ch.ServicesWrite)
	setInt(&out.ModulesDefault, ch.ModulesDefault)
	setInt(&out.APIAccess, ch.APIAccess)
	setInt(&out.APIMode, ch.APIMode)
	if ch.ServicesReadList != nil {
		out.ServicesReadList = slices.Clone(*ch.ServicesReadList)
	}
	if ch.ServicesWriteList != nil {
		out.ServicesWriteList = slices.Clone(*ch.ServicesWriteList)
	}
	if ch.ServicesReadTag != nil {
		out.ServicesReadTag = *ch.ServicesReadTag
	}
	if ch.ServicesWriteTag != nil {
		out.ServicesWriteTag = *ch.ServicesWriteTag
	}
	if ch.API != nil {
		out.API = slices.Clone(*ch.API)
	}
	out.UI = mergeStatuses(UIElements(oldType), UIElements(newType), r.UIStatus, ch.UI, out.UIDefault)
	out.Actions = mergeStatuses(RoleActions(oldType), RoleActions(newType), r.ActionStatus, ch.Actions, out.ActionsDefault)
	return out
}

// mergeStatuses is the explicit statuses of the elements of a role of
// the new type: given, else the old status if the old type had the
// element, else the default; only those differing from def are kept.
func mergeStatuses(oldElems, newElems []string, old func(string) int, given map[string]int, def int) map[string]int {
	out := map[string]int{}
	for _, e := range newElems {
		v, ok := given[e]
		if !ok {
			v = def
			if slices.Contains(oldElems, e) {
				v = old(e)
			}
		}
		if v != def {
			out[e] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// The default roles of a fresh Zabbix 6.0 (recorded from 6.0.14), with
// their IDs: every Peregrine auth database has them from its creation
// (schema version 3), and existing users' types 1..3 became roles 1..3.
var defaultRoles = []UserRole{
	{ID: 1, Name: "User role", Type: RoleUser, Rules: NewRoleRules(RoleUser)},
	{ID: 2, Name: "Admin role", Type: RoleAdmin, Rules: NewRoleRules(RoleAdmin)},
	{ID: 3, Name: "Super admin role", Type: RoleSuperAdmin, ReadOnly: true, Rules: NewRoleRules(RoleSuperAdmin)},
	{ID: 4, Name: "Guest role", Type: RoleUser, Rules: RoleRules{UIDefault: 1, ServicesRead: 1, ModulesDefault: 1}},
}

// GuestRoleID is the role of the guest user.
const GuestRoleID = 4

// maxRoleNameLen is Zabbix's role.name length.
const maxRoleNameLen = 255

// roleRows is the SQL that inserts the default roles (schema version
// 3).
func roleRows() string {
	q := ""
	for _, r := range defaultRoles {
		b, err := json.Marshal(r.Rules)
		if err != nil {
			panic("BUG: default role rules do not marshal: " + err.Error())
		}
		ro := 0
		if r.ReadOnly {
			ro = 1
		}
		q += fmt.Sprintf("INSERT INTO role (id, name, type, readonly, rules) VALUES (%d, '%s', %d, %d, '%s');\n", r.ID, r.Name, r.Type, ro, b)
	}
	return q
}

// Roles returns every role, ordered by ID. It reads the cache the store
// keeps of them (roles are few and read on every API request).
func (s *Store) Roles(ctx context.Context) ([]UserRole, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	m, err := s.roleMap(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]UserRole, 0, len(m))
	for _, id := range slices.Sorted(maps.Keys(m)) {
		out = append(out, cloneRole(m[id]))
	}
	return out, nil
}

// Role returns role id; ErrNotFound if there is none. A cache hit takes
// one atomic load.
func (s *Store) Role(ctx context.Context, id uint64) (UserRole, error) {
	if err := s.begin(); err != nil {
		return UserRole{}, err
	}
	defer s.end()
	m, err := s.roleMap(ctx)
	if err != nil {
		return UserRole{}, err
	}
	r, ok := m[id]
	if !ok {
		return UserRole{}, fmt.Errorf("auth: role %d: %w", id, ErrNotFound)
	}
	return cloneRole(r), nil
}

// RoleRules returns the rules of role id without copying them, for the
// check of every API call: the result is shared and must not be
// modified (a change of the role replaces it). ErrNotFound if there is
// no such role.
func (s *Store) RoleRules(ctx context.Context, id uint64) (*RoleRules, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	m, err := s.roleMap(ctx)
	if err != nil {
		return nil, err
	}
	r, ok := m[id]
	if !ok {
		return nil, fmt.Errorf("auth: role %d: %w", id, ErrNotFound)
	}
	return &r.Rules, nil
}

func cloneRole(r *UserRole) UserRole {
	out := *r
	out.Rules.UI = maps.Clone(r.Rules.UI)
	out.Rules.Actions = maps.Clone(r.Rules.Actions)
	out.Rules.API = slices.Clone(r.Rules.API)
	out.Rules.ServicesReadList = slices.Clone(r.Rules.ServicesReadList)
	out.Rules.ServicesWriteList = slices.Clone(r.Rules.ServicesWriteList)
	return out
}

// roleMap returns the cached roles, loading them on first use.
func (s *Store) roleMap(ctx context.Context) (map[uint64]*UserRole, error) {
	if m := s.roles.Load(); m != nil {
		return *m, nil
	}
	gen := s.rolesGen.Load()
	m, err := loadRoles(ctx, s.db)
	if err != nil {
		return nil, err
	}
	// A change committed while this read ran may have dropped the cache
	// already: undo the store if so (rolesChanged bumps the counter
	// before it drops).
	p := &m
	if s.roles.CompareAndSwap(nil, p) && s.rolesGen.Load() != gen {
		s.roles.CompareAndSwap(p, nil)
	}
	return m, nil
}

// rolesChanged drops the role cache after a committed change.
func (s *Store) rolesChanged() {
	s.rolesGen.Add(1)
	s.roles.Store(nil)
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func loadRoles(ctx context.Context, q queryer) (map[uint64]*UserRole, error) {
	rows, err := q.QueryContext(ctx, "SELECT id, name, type, readonly, rules FROM role")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot read roles: %w", err)
	}
	defer rows.Close()
	m := map[uint64]*UserRole{}
	for rows.Next() {
		var r UserRole
		var ro int
		var rules string
		if err := rows.Scan(&r.ID, &r.Name, &r.Type, &ro, &rules); err != nil {
			return nil, fmt.Errorf("auth: cannot read roles: %w", err)
		}
		if err := json.Unmarshal([]byte(rules), &r.Rules); err != nil {
			return nil, fmt.Errorf("%w: rules of role %d: %v", ErrCorrupt, r.ID, err)
		}
		r.ReadOnly = ro != 0
		m[r.ID] = &r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot read roles: %w", err)
	}
	return m, nil
}

// CreateRoles creates roles in one transaction and returns their IDs in
// order. Names are unique (ErrExists); the caller validates the rules
// (the element names of each user type are UIElements and RoleActions).
// The IDs of rs are ignored.
func (s *Store) CreateRoles(ctx context.Context, rs []UserRole) ([]uint64, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	for _, r := range rs {
		if err := checkName("role name", r.Name, maxRoleNameLen); err != nil {
			return nil, err
		}
		if !r.Type.Valid() {
			return nil, fmt.Errorf("auth: role type %d is not 1, 2 or 3: %w", r.Type, ErrInvalid)
		}
	}
	tx, err := s.tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: cannot create roles: %w", err)
	}
	defer tx.Rollback()
	ids := make([]uint64, len(rs))
	for i, r := range rs {
		if err := roleNameFree(ctx, tx, r.Name, 0); err != nil {
			return nil, err
		}
		b, err := json.Marshal(r.Rules)
		if err != nil {
			return nil, fmt.Errorf("auth: cannot create role %q: %w", r.Name, err)
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO role (name, type, readonly, rules) VALUES (?, ?, 0, ?)", r.Name, int(r.Type), string(b))
		if err != nil {
			return nil, fmt.Errorf("auth: cannot create role %q: %w", r.Name, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, fmt.Errorf("auth: cannot create role %q: %w", r.Name, err)
		}
		ids[i] = uint64(id)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("auth: cannot create roles: %w", err)
	}
	s.rolesChanged()
	s.log.Info("auth: roles created", "roleids", ids)
	return ids, nil
}

// UpdateRoles changes roles in one transaction. An unknown ID gives
// ErrNotFound, a read-only role ErrReadOnly, a type change that would
// leave no super admin ErrInvalid; nothing is changed
// then. The users of a role whose type changed get it at their next
// request.
func (s *Store) UpdateRoles(ctx context.Context, chs []RoleChange) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	for _, ch := range chs {
		if ch.Name != nil {
			if err := checkName("role name", *ch.Name, maxRoleNameLen); err != nil {
				return err
			}
		}
		if ch.Type != nil && !ch.Type.Valid() {
			return fmt.Errorf("auth: role type %d is not 1, 2 or 3: %w", *ch.Type, ErrInvalid)
		}
	}
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot update roles: %w", err)
	}
	defer tx.Rollback()
	cur, err := loadRoles(ctx, tx)
	if err != nil {
		return err
	}
	supers, err := superAdmins(ctx, tx)
	if err != nil {
		return err
	}
	for _, ch := range chs {
		old := cur[ch.ID]
		if old == nil {
			return fmt.Errorf("auth: role %d: %w", ch.ID, ErrNotFound)
		}
		if old.ReadOnly {
			return fmt.Errorf("auth: role %q: %w", old.Name, ErrReadOnly)
		}
		nr := cloneRole(old)
		if ch.Name != nil {
			if err := roleNameFree(ctx, tx, *ch.Name, ch.ID); err != nil {
				return err
			}
			nr.Name = *ch.Name
		}
		if ch.Type != nil {
			nr.Type = *ch.Type
		}
		nr.Rules = old.Rules.Apply(old.Type, nr.Type, ch.Rules)
		b, err := json.Marshal(nr.Rules)
		if err != nil {
			return fmt.Errorf("auth: cannot update role %d: %w", ch.ID, err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE role SET name = ?, type = ?, rules = ? WHERE id = ?", nr.Name, int(nr.Type), string(b), int64(ch.ID)); err != nil {
			return fmt.Errorf("auth: cannot update role %d: %w", ch.ID, err)
		}
		cur[ch.ID] = &nr
	}
	if n, err := superAdmins(ctx, tx); err != nil {
		return err
	} else if supers > 0 && n == 0 {
		return fmt.Errorf("auth: no user would be a super admin any more: %w", ErrInvalid)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot update roles: %w", err)
	}
	s.rolesChanged()
	// Cached sessions and tokens carry their user's type: drop them all
	// (roles change rarely), so the next request reads it again.
	s.mu.Lock()
	clear(s.sessions)
	clear(s.tokens)
	clear(s.tokenByID)
	s.mu.Unlock()
	s.log.Info("auth: roles updated", "count", len(chs))
	return nil
}

// DeleteRoles deletes roles. An unknown ID gives ErrNotFound, a
// read-only role ErrReadOnly, a role some user has ErrInUse; nothing is
// deleted then.
func (s *Store) DeleteRoles(ctx context.Context, ids []uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot delete roles: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		var name string
		var ro int
		err := tx.QueryRowContext(ctx, "SELECT name, readonly FROM role WHERE id = ?", int64(id)).Scan(&name, &ro)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("auth: role %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("auth: cannot delete role %d: %w", id, err)
		}
		if ro != 0 {
			return fmt.Errorf("auth: role %q: %w", name, ErrReadOnly)
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE role_id = ?", int64(id)).Scan(&n); err != nil {
			return fmt.Errorf("auth: cannot delete role %d: %w", id, err)
		}
		if n > 0 {
			return fmt.Errorf("auth: role %q: %w", name, ErrInUse)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM role WHERE id = ?", int64(id)); err != nil {
			return fmt.Errorf("auth: cannot delete role %d: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot delete roles: %w", err)
	}
	s.rolesChanged()
	s.log.Info("auth: roles deleted", "roleids", ids)
	return nil
}

func roleNameFree(ctx context.Context, tx *sql.Tx, name string, self uint64) error {
	var id uint64
	err := tx.QueryRowContext(ctx, "SELECT id FROM role WHERE name = ?", name).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && id == self:
		return nil
	case err != nil:
		return fmt.Errorf("auth: cannot check role name %q: %w", name, err)
	}
	return fmt.Errorf("auth: role %q: %w", name, ErrExists)
}

// superAdmins counts the users whose role is of the super admin type.
func superAdmins(ctx context.Context, tx *sql.Tx) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users u JOIN role r ON r.id = u.role_id WHERE r.type = ?", int(RoleSuperAdmin)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("auth: cannot count super admins: %w", err)
	}
	return n, nil
}
