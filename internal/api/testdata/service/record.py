#!/usr/bin/env python3
# Records the service.* and sla.* scenarios of TestServiceGolden from a
# running Zabbix 6.0 (the peer: ../shared/peers/zabbix/setup.sh) into
# service.jsonl and sla.jsonl beside this file:
#
#   python3 record.py [http://127.0.0.1:10088/api_jsonrpc.php]
#
# It logs in as Admin/zabbix, creates the user group "sv-ugroup" and the
# user "sv-user" (User role) for the cases of a user without write
# access, and leaves nothing behind: every service and SLA it creates is
# named "sv-..." and deleted, and so are the user and the group.
import copy, json, os, re, sys, time, urllib.request

U = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:10088/api_jsonrpc.php"
HERE = os.path.dirname(os.path.abspath(__file__))
_tok = {}

def raw(method, params, auth=None, id=1):
    body = {"jsonrpc": "2.0", "method": method, "params": params, "id": id}
    if auth:
        body["auth"] = auth
    req = urllib.request.Request(U, data=json.dumps(body).encode(), headers={"Content-Type": "application/json-rpc"})
    return json.load(urllib.request.urlopen(req))

def login(user="Admin", pw="zabbix"):
    if user not in _tok:
        _tok[user] = raw("user.login", {"username": user, "password": pw})["result"]
    return _tok[user]

def call(method, params):
    return raw(method, params, login())["result"]

def ensure_user():
    if call("user.get", {"filter": {"username": "sv-user"}}):
        return
    g = call("usergroup.get", {"filter": {"name": "sv-ugroup"}})
    gid = g[0]["usrgrpid"] if g else call("usergroup.create", {"name": "sv-ugroup"})["usrgrpids"][0]
    call("user.create", {"username": "sv-user", "passwd": "sv-pass-1234", "roleid": "1", "usrgrps": [{"usrgrpid": gid}]})

def drop_user():
    u = call("user.get", {"filter": {"username": "sv-user"}})
    if u:
        call("user.delete", [u[0]["userid"]])
    g = call("usergroup.get", {"filter": {"name": "sv-ugroup"}})
    if g:
        call("usergroup.delete", [g[0]["usrgrpid"]])

def cleanup():
    ids = [s["serviceid"] for s in call("service.get", {"output": ["serviceid", "name"]}) if s["name"].startswith("sv-")]
    if ids:
        call("service.delete", ids)
    ids = [s["slaid"] for s in call("sla.get", {"output": ["slaid", "name"]}) if s["name"].startswith("sv-")]
    if ids:
        call("sla.delete", ids)

def run(steps, out, user="Admin"):
    binds = {}  # name -> ID; names are unique across kinds
    rev = {"service": {}, "sla": {}}  # kind -> ID -> "$name"
    lines = []
    def subst(v):
        if isinstance(v, str) and v.startswith("$#") and v[2:] in binds:
            return int(binds[v[2:]])
        if isinstance(v, str) and v.startswith("$") and v[1:] in binds:
            return binds[v[1:]]
        if isinstance(v, list): return [subst(x) for x in v]
        if isinstance(v, dict): return {k: subst(x) for k, x in v.items()}
        return v
    def norm(v, own):
        if isinstance(v, dict):
            o = {}
            for k, x in v.items():
                kind = k[:-3] if k.endswith("ids") else k[:-2]
                if k in ("uuid", "created_at"):
                    o[k] = "*"
                elif k in ("serviceid", "slaid") and isinstance(x, str):
                    o[k] = rev[kind].get(x, x)
                elif k in ("serviceids", "slaids") and isinstance(x, list):
                    o[k] = [("#" if isinstance(e, int) else "") + rev[kind].get(str(e), str(e)) for e in x]
                elif k in own and isinstance(x, dict):  # preservekeys
                    o[own[k]] = norm(x, own)
                else:
                    o[k] = norm(x, own)
            return o
        if isinstance(v, list):
            return [norm(x, own) for x in v]
        return v
    for st in steps:
        method, params = st[0], st[1]
        opts = st[2] if len(st) > 2 else {}
        own = rev[method.split(".")[0]]
        p = subst(copy.deepcopy(params))
        while True:
            now = int(time.time())
            r = raw(method, p, login(opts.get("user", user), opts.get("pw", "zabbix")))
            # sla.getsli (read-only) again until its time is one second,
            # for the replay's clock.
            if method != "sla.getsli" or int(time.time()) == now:
                break
        ans = {"result": r["result"]} if "result" in r else {"error": r["error"]}
        if "bind" in opts and "result" in r:
            key = list(r["result"].keys())[0]
            for name, idv in zip(opts["bind"], r["result"][key]):
                binds[name] = idv
                own[idv] = "$" + name
        line = {"method": method, "params": params}
        if method == "sla.getsli":
            line["now"] = now
        if opts.get("user"): line["user"] = opts["user"]
        if "error" in ans and isinstance(ans["error"].get("data"), str):
            ans["error"]["data"] = re.sub(r"\((\d+)\)", lambda m: "(" + own.get(m.group(1), m.group(1)) + ")", ans["error"]["data"])
        line["answer"] = norm(ans, own)
        lines.append(line)
    with open(out, "w") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")
    return binds

def B(*n, **kw): d = {"bind": list(n)}; d.update(kw); return d
service_steps = [
 # create: required members, in Zabbix's rule order
 ("service.create", {"name": "sv-x"}),
 ("service.create", {"algorithm": 1, "sortorder": 0}),
 ("service.create", {"name": "", "algorithm": 1, "sortorder": 0}),
 ("service.create", {"name": "sv-x", "algorithm": 3, "sortorder": 0}),
 ("service.create", {"name": "sv-x", "algorithm": "2", "sortorder": 1000}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "weight": -1}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "weight": 1000001}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "propagation_rule": 5}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "propagation_rule": 1}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "propagation_value": 1}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "propagation_rule": 1, "propagation_value": 0}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "propagation_rule": 1, "propagation_value": 6}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "propagation_rule": 4, "propagation_value": -2}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "propagation_rule": 3, "propagation_value": 1}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "foo": 1}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status": 1}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "tags": [{"value": "a"}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "tags": [{"tag": ""}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "tags": [{"tag": "a", "value": "b"}, {"tag": "a", "value": "b"}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "tags": [{"tag": "a", "x": "b"}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "tags": {"tag": "a"}}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "tags": "a"}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "problem_tags": [{"tag": "a", "operator": 1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "problem_tags": [{"tag": "a", "value": "1"}, {"tag": "a", "operator": 2, "value": "1"}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status_rules": [{"type": 8, "limit_value": 1, "limit_status": 1, "new_status": 1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status_rules": [{"type": 1, "limit_value": 101, "limit_status": 1, "new_status": 1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status_rules": [{"type": 0, "limit_value": 1000001, "limit_status": 1, "new_status": 1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status_rules": [{"type": 0, "limit_value": 1, "limit_status": -2, "new_status": 1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status_rules": [{"type": 0, "limit_value": 1, "limit_status": 1, "new_status": -1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status_rules": [{"type": 0, "limit_value": 1, "limit_status": 1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "status_rules": [{"type": 0, "limit_value": 1, "limit_status": 1, "new_status": 2}, {"type": 0, "limit_value": 1, "limit_status": 1, "new_status": 3}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "parents": [{"serviceid": "999999"}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "children": [{"serviceid": "999999"}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "parents": [{"id": 1}]}),
 ("service.create", {"name": "sv-x", "algorithm": 1, "sortorder": 0, "uuid": "abc"}),
 ("service.create", []),
 ("service.create", [{"name": "sv-ok1", "algorithm": 1, "sortorder": 0}, {"name": "sv-ok2"}]),
 # a tree
 ("service.create", {"name": "sv-root", "algorithm": 2, "sortorder": 1, "description": "the root", "tags": [{"tag": "team", "value": "ops"}, {"tag": "sla", "value": "gold"}]}, B("root")),
 ("service.create", [{"name": "sv-web", "algorithm": 2, "sortorder": 2, "weight": 3, "parents": [{"serviceid": "$root"}], "tags": [{"tag": "sla", "value": "Gold-plus"}, {"tag": "tier", "value": "front"}], "problem_tags": [{"tag": "sv-svc", "value": "web"}, {"tag": "sv-env", "operator": 2, "value": "pro"}]},
                     {"name": "sv-db", "algorithm": 1, "sortorder": 0, "propagation_rule": 1, "propagation_value": 2, "parents": [{"serviceid": "$root"}], "tags": [{"tag": "tier", "value": "back"}], "problem_tags": [{"tag": "sv-svc", "operator": "0", "value": "db"}]}], B("web", "db")),
 ("service.create", {"name": "sv-lone", "algorithm": "0", "sortorder": "5", "uuid": "0123456789ab4def8123456789abcdef", "status_rules": [{"type": 2, "limit_value": 50, "limit_status": -1, "new_status": 3}, {"type": "5", "limit_value": "100", "limit_status": "4", "new_status": "5"}]}, B("lone")),
 ("service.create", {"name": "sv-dup", "algorithm": 0, "sortorder": 0, "uuid": "0123456789ab4def8123456789abcdef"}),
 ("service.create", {"name": "sv-mid", "algorithm": 2, "sortorder": 3, "parents": [{"serviceid": "$root"}], "children": [{"serviceid": "$web"}]}, B("mid")),
 # problem tags and children
 ("service.create", {"name": "sv-bad", "algorithm": 2, "sortorder": 0, "problem_tags": [{"tag": "a"}], "children": [{"serviceid": "$lone"}]}),
 ("service.create", {"name": "sv-bad", "algorithm": 2, "sortorder": 0, "parents": [{"serviceid": "$web"}]}),
 ("service.update", {"serviceid": "$web", "children": [{"serviceid": "$lone"}]}),
 ("service.update", {"serviceid": "$db", "problem_tags": [], "children": [{"serviceid": "$lone"}]}),
 ("service.update", {"serviceid": "$db", "problem_tags": [{"tag": "sv-svc", "value": "db"}]}),
 ("service.update", {"serviceid": "$db", "children": []}),
 ("service.update", {"serviceid": "$db", "problem_tags": [{"tag": "sv-svc", "value": "db"}, {"tag": "x", "value": "y"}]}),
 # circular references
 ("service.update", {"serviceid": "$root", "parents": [{"serviceid": "$mid"}]}),
 ("service.update", {"serviceid": "$root", "parents": [{"serviceid": "$root"}]}),
 ("service.update", {"serviceid": "$lone", "children": [{"serviceid": "$root"}], "parents": [{"serviceid": "$mid"}]}),
 ("service.create", {"name": "sv-c", "algorithm": 2, "sortorder": 0, "parents": [{"serviceid": "$mid"}], "children": [{"serviceid": "$root"}]}),
 # update rules
 ("service.update", {"name": "x"}),
 ("service.update", {"serviceid": "999999", "name": "x"}),
 ("service.update", [{"serviceid": "$lone", "name": "a"}, {"serviceid": "$lone", "name": "b"}]),
 ("service.update", {"serviceid": "$lone", "name": ""}),
 ("service.update", {"serviceid": "$lone", "uuid": "0123456789ab4def8123456789abcdee"}),
 ("service.update", {"serviceid": "$lone", "created_at": 5}),
 ("service.update", {"serviceid": "$lone", "propagation_value": 1}),
 ("service.update", {"serviceid": "$db", "propagation_value": 3}),
 ("service.update", {"serviceid": "$db", "propagation_value": 0}),
 ("service.update", {"serviceid": "$db", "propagation_rule": 0, "propagation_value": 0, "weight": "7", "description": "db tier"}),
 ("service.update", [{"serviceid": "$web", "parents": [{"serviceid": "$mid"}]}, {"serviceid": "$mid", "children": []}]),
 ("service.update", {"serviceid": "$lone", "status_rules": [{"type": 2, "limit_value": 50, "limit_status": -1, "new_status": 4}], "tags": [{"tag": "sla", "value": "silver"}]}),
 # get: output and selects
 ("service.get", {"output": "extend", "sortfield": "serviceid"}),
 ("service.get", {"output": ["name", "status"], "sortfield": "name"}),
 ("service.get", {"output": ["serviceid", "readonly"], "serviceids": "$web"}),
 ("service.get", {"output": [], "serviceids": ["$web", "$db"], "sortfield": "serviceid", "selectParents": ["name"], "selectChildren": "count", "selectTags": "extend", "selectProblemTags": ["tag"], "selectStatusRules": "extend", "selectProblemEvents": "extend"}),
 ("service.get", {"output": ["name"], "serviceids": "$root", "selectChildren": "extend", "selectParents": "count", "selectTags": "count", "selectProblemTags": "count", "selectStatusRules": "count", "selectProblemEvents": "count"}),
 ("service.get", {"output": ["name"], "serviceids": "$lone", "selectStatusRules": ["new_status", "type"], "selectTags": ["value"], "selectProblemEvents": ["name"]}),
 ("service.get", {"output": ["name"], "serviceids": "$lone", "selectStatusTimeline": [{"period_from": 0, "period_to": 100}, {"period_from": "100", "period_to": "200"}]}),
 ("service.get", {"output": ["name"], "serviceids": "$lone", "selectStatusTimeline": []}),
 ("service.get", {"output": ["name"], "serviceids": "$lone", "selectStatusTimeline": [{"period_from": 0}]}),
 ("service.get", {"output": ["name"], "serviceids": "$lone", "selectStatusTimeline": {"period_from": 0, "period_to": 1}}),
 ("service.get", {"output": ["name"], "serviceids": "$lone", "selectStatusTimeline": [{"period_from": 0, "period_to": 1}, {"period_from": 0, "period_to": 1}]}),
 ("service.get", {"output": ["name"], "selectChildren": ["foo"]}),
 ("service.get", {"output": ["foo"]}),
 ("service.get", {"output": "name"}),
 # get: filters
 ("service.get", {"output": ["name"], "parentids": "$root", "sortfield": "name"}),
 ("service.get", {"output": ["name"], "parentids": ["$root"], "deep_parentids": True, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "parentids": 0, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "parentids": [0, "$mid"], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "parentids": 0, "deep_parentids": True, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "deep_parentids": True, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "childids": "$web", "sortfield": "name"}),
 ("service.get", {"output": ["name"], "childids": ["$web", "$db"], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "tier"}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "sla", "value": "GOLD"}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "sla", "value": "gold", "operator": 1}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "sla", "value": "gold", "operator": 2}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "sla", "value": "gold", "operator": 3}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "tier", "operator": 4}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "tier", "operator": 5}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "tier", "value": "front"}, {"tag": "team"}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "tier", "value": "front"}, {"tag": "team"}], "evaltype": 2, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "tier", "value": "front", "operator": 1}, {"tag": "tier", "value": "back", "operator": 1}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "tags": [{"tag": "tier", "operator": 6}]}),
 ("service.get", {"output": ["name"], "tags": [{"value": "x"}]}),
 ("service.get", {"output": ["name"], "evaltype": 1}),
 ("service.get", {"output": ["name"], "problem_tags": [{"tag": "sv-svc"}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "problem_tags": [{"tag": "sv-env", "value": "pro", "operator": 1}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "without_problem_tags": True, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "without_problem_tags": 1, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "without_problem_tags": True, "problem_tags": [{"tag": "sv-svc"}], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "filter": {"name": ["sv-web", "sv-db"], "algorithm": 1}}),
 ("service.get", {"output": ["name"], "filter": {"status": -1, "foo": 1}}),
 ("service.get", {"output": ["name"], "filter": {"sortorder": 1}}),
 ("service.get", {"output": ["name"], "search": {"name": "W"}, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "search": {"name": "sv-*b"}, "searchWildcardsEnabled": True, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "search": {"name": "sv-d"}, "startSearch": True, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "search": {"name": "sv-"}, "excludeSearch": True}),
 ("service.get", {"output": ["name"], "search": {"description": "x"}}),
 ("service.get", {"output": ["name", "sortorder"], "sortfield": ["sortorder", "name"], "sortorder": "DESC"}),
 ("service.get", {"output": ["name"], "sortfield": "weight"}),
 ("service.get", {"output": ["name"], "sortfield": "name", "limit": 2}),
 ("service.get", {"output": ["name"], "limit": 0}),
 ("service.get", {"countOutput": True}),
 ("service.get", {"countOutput": "1", "parentids": "$root"}),
 ("service.get", {"output": ["name"], "serviceids": ["$web"], "preservekeys": True}),
 ("service.get", {"output": ["name"], "serviceids": ["$web"], "preservekeys": "1"}),
 ("service.get", {"output": ["name"], "serviceids": ["$web"], "editable": True}),
 ("service.get", {"output": ["name"], "serviceids": "$#web"}),
 ("service.get", {"output": ["name"], "serviceids": None, "sortfield": "name"}),
 ("service.get", {"output": ["name"], "serviceids": [], "sortfield": "name"}),
 ("service.get", {"output": ["name"], "serviceids": ["x"]}),
 ("service.get", {"foo": 1}),
 ("service.get", {"selectFoo": 1}),
 ("service.get", {"output": ["name"], "slaids": []}),
 ("service.get", {"output": ["name"], "slaids": ["999999"]}),
 ("service.get", []),
 # as a user of the User role
 ("service.get", {"output": ["name", "readonly"], "sortfield": "name"}, {"user": "sv-user", "pw": "sv-pass-1234"}),
 ("service.get", {"output": ["name"], "editable": True}, {"user": "sv-user", "pw": "sv-pass-1234"}),
 ("service.create", {"name": "sv-u", "algorithm": 0, "sortorder": 0}, {"user": "sv-user", "pw": "sv-pass-1234"}),
 ("service.update", {"serviceid": "$lone", "name": "sv-u"}, {"user": "sv-user", "pw": "sv-pass-1234"}),
 ("service.delete", ["$lone"], {"user": "sv-user", "pw": "sv-pass-1234"}),
 # replacing parents and children; nested lists sorted by the request's sortfield
 ("service.create", {"name": "sv-extra", "algorithm": 2, "sortorder": 4, "parents": [{"serviceid": "$root"}, {"serviceid": "$mid"}]}, B("extra")),
 ("service.get", {"output": ["name"], "serviceids": ["$root", "$mid"], "selectChildren": ["name", "sortorder"], "sortfield": "name", "sortorder": "DESC"}),
 ("service.get", {"output": ["name"], "serviceids": ["$root", "$mid"], "selectChildren": ["sortorder"], "sortfield": ["sortorder"]}),
 ("service.update", {"serviceid": "$extra", "parents": [{"serviceid": "$mid"}]}),
 ("service.get", {"output": ["name"], "serviceids": "$extra", "selectParents": ["name"]}),
 ("service.update", {"serviceid": "$mid", "children": [{"serviceid": "$extra"}, {"serviceid": "$lone"}]}),
 ("service.get", {"output": ["name"], "serviceids": ["$mid", "$web", "$lone"], "selectParents": ["name"], "selectChildren": ["name"], "sortfield": "name"}),
 ("service.update", {"serviceid": "$extra", "parents": []}),
 ("service.get", {"output": ["name"], "parentids": 0, "sortfield": "name"}),
 ("service.update", {"serviceid": "$lone", "tags": [{"tag": "b"}, {"tag": "sla", "value": "silver"}, {"tag": "a", "value": "1"}], "status_rules": [{"type": 2, "limit_value": 50, "limit_status": -1, "new_status": 5}, {"type": 0, "limit_value": 1, "limit_status": 3, "new_status": 2}]}),
 ("service.get", {"output": ["name"], "serviceids": "$lone", "selectTags": "extend", "selectStatusRules": "extend", "selectProblemEvents": "count"}),
 ("service.delete", ["$extra"]),
 # delete
 ("service.delete", []),
 ("service.delete", ["999999"]),
 ("service.delete", ["$lone", "$lone"]),
 ("service.delete", ["$mid"]),
 ("service.get", {"output": ["name"], "serviceids": ["$root", "$web"], "selectChildren": ["name"], "selectParents": ["name"], "sortfield": "name"}),
 ("service.delete", ["$root", "$web", "$db", "$lone"]),
]

base = {"period": 2, "slo": 99.9, "effective_date": 0, "timezone": "UTC", "service_tags": [{"tag": "sla", "value": "gold"}]}
def S(**kw):
    d = dict(base); d.update(kw); return {k: v for k, v in d.items() if v is not None}
USER = {"user": "sv-user", "pw": "sv-pass-1234"}
sla_steps = [
 ("service.create", [{"name": "sv-s1", "algorithm": 2, "sortorder": 0, "tags": [{"tag": "sla", "value": "gold"}]},
                     {"name": "sv-s2", "algorithm": 2, "sortorder": 0, "tags": [{"tag": "sla", "value": "Gold-Plus"}, {"tag": "team", "value": "a"}]},
                     {"name": "sv-s3", "algorithm": 2, "sortorder": 0}], B("s1", "s2", "s3")),
 ("sla.create", {"name": "sv-a"}),
 ("sla.create", S(name=None)),
 ("sla.create", S(name="sv-a", period=None)),
 ("sla.create", S(name="sv-a", slo=None)),
 ("sla.create", S(name="sv-a", effective_date=None)),
 ("sla.create", S(name="sv-a", timezone=None)),
 ("sla.create", S(name="sv-a", service_tags=None)),
 ("sla.create", S(name="sv-a", service_tags=[])),
 ("sla.create", S(name="")),
 ("sla.create", S(name="sv-a", period=5)),
 ("sla.create", S(name="sv-a", slo=100.01)),
 ("sla.create", S(name="sv-a", slo=-1)),
 ("sla.create", S(name="sv-a", slo="abc")),
 ("sla.create", S(name="sv-a", slo="99.12345")),
 ("sla.create", S(name="sv-a", slo=True)),
 ("sla.create", S(name="sv-a", effective_date=-1)),
 ("sla.create", S(name="sv-a", effective_date="x")),
 ("sla.create", S(name="sv-a", timezone="Mars/Olympus")),
 ("sla.create", S(name="sv-a", timezone="")),
 ("sla.create", S(name="sv-a", status=2)),
 ("sla.create", S(name="sv-a", service_tags=[{"tag": "a", "operator": 1}])),
 ("sla.create", S(name="sv-a", service_tags=[{"tag": ""}])),
 ("sla.create", S(name="sv-a", service_tags=[{"tag": "a"}, {"tag": "a", "operator": 2}])),
 ("sla.create", S(name="sv-a", schedule=[{"period_from": 0, "period_to": 604801}])),
 ("sla.create", S(name="sv-a", schedule=[{"period_from": 10, "period_to": 10}])),
 ("sla.create", S(name="sv-a", schedule=[{"period_from": 10}])),
 ("sla.create", S(name="sv-a", schedule=[{"period_from": 0, "period_to": 10}, {"period_from": 0, "period_to": 10}])),
 ("sla.create", S(name="sv-a", excluded_downtimes=[{"name": "x", "period_from": 10, "period_to": 5}])),
 ("sla.create", S(name="sv-a", excluded_downtimes=[{"period_from": 1, "period_to": 5}])),
 ("sla.create", S(name="sv-a", excluded_downtimes=[{"name": "", "period_from": 1, "period_to": 5}])),
 ("sla.create", S(name="sv-a", excluded_downtimes=[{"name": "x", "period_from": 1, "period_to": 5}, {"name": "y", "period_from": 1, "period_to": 5}])),
 ("sla.create", S(name="sv-a", foo=1)),
 ("sla.create", [S(name="sv-a"), S(name="sv-a")]),
 ("sla.create", []),
 ("sla.create", S(name="sv-a"), USER),
 ("sla.create", S(name="sv-a", description="first", slo="99.95", service_tags=[{"tag": "sla", "value": "gold"}, {"tag": "team", "operator": "2", "value": "A"}]), B("a")),
 ("sla.create", S(name="sv-a")),
 ("sla.create", [S(name="sv-b", period=0, slo=95, status=0, timezone="Europe/Riga", effective_date=1700000000,
                   schedule=[{"period_from": 3600, "period_to": 7200}, {"period_from": 7000, "period_to": 10000}, {"period_from": 0, "period_to": 600}],
                   excluded_downtimes=[{"name": "later", "period_from": 1800000000, "period_to": 1800003600}, {"name": "sooner", "period_from": 1700000000, "period_to": 1700003600}],
                   service_tags=[{"tag": "sla", "operator": 2, "value": "GOLD"}]),
                 S(name="sv-c", period=4, slo=0, timezone="system", schedule=[{"period_from": 0, "period_to": 604800}], service_tags=[{"tag": "none"}]),
                 S(name="sv-d", period=1, slo=100, timezone="America/New_York", schedule=[{"period_from": 0, "period_to": 100}, {"period_from": 100, "period_to": 604800}])], B("b", "c", "d")),
 ("sla.get", {"output": "extend", "sortfield": "name"}),
 ("sla.get", {"output": ["name", "slo"], "selectServiceTags": "extend", "selectSchedule": "extend", "selectExcludedDowntimes": "extend", "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "selectServiceTags": "count", "selectSchedule": "count", "selectExcludedDowntimes": "count", "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "selectServiceTags": ["tag"], "selectSchedule": ["period_to"], "selectExcludedDowntimes": ["name"], "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "selectSchedule": ["foo"]}),
 ("sla.get", {"output": ["slaid"], "slaids": "$b"}),
 ("sla.get", {"output": ["name"], "serviceids": ["$s1"], "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "serviceids": "$s2", "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "serviceids": ["$s3"]}),
 ("sla.get", {"output": ["name"], "serviceids": []}),
 ("sla.get", {"output": ["name"], "service_tags": [{"tag": "team"}], "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "service_tags": [{"tag": "sla", "value": "gold", "operator": 1}], "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "service_tags": [{"tag": "sla", "value": "gold", "operator": 1}, {"tag": "none"}], "evaltype": 2, "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "filter": {"period": [0, 4], "status": 1}, "sortfield": "name"}),
 ("sla.get", {"output": ["name"], "filter": {"slo": "99.95"}}),
 ("sla.get", {"output": ["name"], "filter": {"description": "first"}}),
 ("sla.get", {"output": ["name"], "search": {"timezone": "euro"}}),
 ("sla.get", {"output": ["name"], "search": {"description": "fir"}}),
 ("sla.get", {"output": ["name", "slo"], "sortfield": "slo", "sortorder": "DESC"}),
 ("sla.get", {"output": ["name", "timezone"], "sortfield": ["timezone", "name"]}),
 ("sla.get", {"output": ["name"], "sortfield": "foo"}),
 ("sla.get", {"countOutput": True}),
 ("sla.get", {"output": ["name"], "slaids": ["$a"], "preservekeys": True}),
 ("sla.get", {"output": ["name"], "editable": True, "sortfield": "name"}),
 ("sla.get", {"foo": 1}),
 ("sla.get", {"output": ["name"], "sortfield": "name"}, USER),
 ("sla.get", {"output": ["name"], "editable": True, "sortfield": "name"}, USER),
 # update
 ("sla.update", {"name": "x"}),
 ("sla.update", {"slaid": "999999", "name": "x"}),
 ("sla.update", {"slaid": "$a", "name": "sv-b"}),
 ("sla.update", [{"slaid": "$a", "name": "sv-z"}, {"slaid": "$b", "name": "sv-z"}]),
 ("sla.update", [{"slaid": "$a"}, {"slaid": "$a"}]),
 ("sla.update", {"slaid": "$a", "service_tags": []}),
 ("sla.update", {"slaid": "$a", "slo": 1.00001}),
 ("sla.update", {"slaid": "$a", "schedule": [{"period_from": 5, "period_to": 1}]}),
 ("sla.update", {"slaid": "$a", "name": "sv-a2", "slo": 97.5, "period": 3, "schedule": [{"period_from": 86400, "period_to": 172800}], "excluded_downtimes": [{"name": "one", "period_from": 1, "period_to": 2}], "status": 0, "description": "", "timezone": "Asia/Kolkata", "effective_date": 86400}),
 ("sla.update", {"slaid": "$a"}),
 ("sla.get", {"output": "extend", "slaids": "$a", "selectServiceTags": "extend", "selectSchedule": "extend", "selectExcludedDowntimes": "extend"}),
 ("sla.update", {"slaid": "$a", "name": "sv-x"}, USER),
 ("sla.update", {"slaid": "$b", "excluded_downtimes": [{"name": "renamed", "period_from": 1700000000, "period_to": 1700003600}, {"name": "new", "period_from": 1600000000, "period_to": 1600000001}], "schedule": [{"period_from": 100, "period_to": 200}, {"period_from": 0, "period_to": 150}], "service_tags": [{"tag": "x"}, {"tag": "sla", "operator": 2, "value": "GOLD"}]}),
 ("sla.get", {"output": ["name"], "slaids": "$b", "selectServiceTags": "extend", "selectSchedule": "extend", "selectExcludedDowntimes": "extend"}),
 ("sla.getsli", {"slaid": "$d", "serviceids": ["$s3"], "periods": 2}),
 ("sla.getsli", {"slaid": "$d", "serviceids": "$s1", "period_from": 0, "period_to": 1, "periods": 1}),
 ("sla.getsli", {"slaid": "$d", "period_from": 2147483647}),
 ("sla.getsli", {"slaid": "$d", "period_to": 2147483647, "periods": 1}),
 # delete
 ("sla.delete", []),
 ("sla.delete", ["999999"]),
 ("sla.delete", ["$a", "$a"]),
 ("sla.delete", ["$a"], USER),
 ("sla.delete", ["$a", "$b", "$c", "$d"]),
 ("sla.getsli", {"slaid": "$a"}),
 ("service.delete", ["$s1", "$s2", "$s3"]),
]

if __name__ == "__main__":
    ensure_user()
    cleanup()
    run(service_steps, os.path.join(HERE, "service.jsonl"))
    cleanup()
    run(sla_steps, os.path.join(HERE, "sla.jsonl"))
    cleanup()
    drop_user()
