#!/usr/bin/env python3
"""Records what Zabbix 6.0 writes to its audit log for sequence.json.

Run against a live Zabbix 6.0 (the peer: ../shared/peers/zabbix/setup.sh):
    python3 record.py [http://127.0.0.1:10088/api_jsonrpc.php] > peer.json
It creates the super admin "au-admin" (password au-Secret-123) if needed,
removes what an earlier run left (names starting with "au-"), runs each
step as au-admin and keeps, per step, the audit records it made
(auditlog.get, output extend). TestAuditLogAsZabbix replays the same
steps against Peregrine and compares.
"""
import json, sys, time, urllib.request

API = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:10088/api_jsonrpc.php"
USER, PASS = "au-admin", "au-Secret-123"


def post(body):
    req = urllib.request.Request(API, json.dumps(body).encode(), {"Content-Type": "application/json-rpc"})
    with urllib.request.urlopen(req) as r:
        t = r.read()
    return json.loads(t) if t else None


def call(method, params, auth=None):
    body = {"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
    if auth:
        body["auth"] = auth
    return post(body)


def must(method, params, auth):
    r = call(method, params, auth)
    if "error" in r:
        raise SystemExit("%s %s: %s" % (method, json.dumps(params), r["error"]))
    return r["result"]


admin = must("user.login", {"username": "Admin", "password": "zabbix"}, None)
if not must("user.get", {"filter": {"username": USER}}, admin):
    must("user.create", {"username": USER, "passwd": PASS, "roleid": "3", "usrgrps": [{"usrgrpid": "7"}]}, admin)
me = must("user.get", {"filter": {"username": USER}}, admin)[0]["userid"]


def clean():
    for m, idf, flt in [("action", "actionid", "name"), ("script", "scriptid", "name"), ("user", "userid", "username"),
                        ("usergroup", "usrgrpid", "name"), ("mediatype", "mediatypeid", "name"),
                        ("maintenance", "maintenanceid", "name"), ("host", "hostid", "host"), ("hostgroup", "groupid", "name")]:
        objs = must(m + ".get", {"output": [idf, flt], "search": {flt: "au-"}, "startSearch": True}, admin)
        ids = [o[idf] for o in objs if o[flt] != USER]
        if ids:
            must(m + ".delete", ids, admin)
    ms = must("usermacro.get", {"globalmacro": True, "output": ["globalmacroid", "macro"]}, admin)
    ids = [m["globalmacroid"] for m in ms if m["macro"].startswith("{$AU_")]
    if ids:
        must("usermacro.deleteglobal", ids, admin)


clean()
tok = must("user.login", {"username": USER, "password": PASS}, None)
saved = {"me": me}


def fill(v):
    if isinstance(v, str):
        for k, x in saved.items():
            v = v.replace("{" + k + "}", x)
        return v
    if isinstance(v, list):
        return [fill(x) for x in v]
    if isinstance(v, dict):
        return {k: fill(x) for k, x in v.items()}
    return v


def keep(step, res):
    for name, path in step.get("save", {}).items():
        if path == "":
            saved[name] = res
            continue
        v = res
        for p in path.split("."):
            v = v[int(p)] if p.isdigit() else v[p]
        saved[name] = v


seen = set(a["auditid"] for a in must("auditlog.get", {"output": ["auditid"], "time_from": int(time.time()) - 600}, admin))
start = int(time.time()) - 1
steps = []
for st in json.load(open(__file__.rsplit("/", 1)[0] + "/sequence.json" if "/" in __file__ else "sequence.json")):
    if "batch" in st:
        body = [{"jsonrpc": "2.0", "method": b["method"], "params": fill(b["params"]), "auth": tok, "id": i + 1}
                for i, b in enumerate(st["batch"])]
        out = post(body)
        for b, r in zip(st["batch"], out):
            keep(b, r["result"])
        answer = [r.get("result", r.get("error")) for r in out]
    else:
        auth = st.get("auth", True)
        auth = tok if auth is True else (fill(auth) if auth else None)
        r = call(st["method"], fill(st["params"]), auth)
        answer = r.get("result", r.get("error"))
        if "result" in r:
            keep(st, r["result"])
    time.sleep(0.2)
    recs = [a for a in must("auditlog.get", {"output": "extend", "time_from": start, "sortfield": "auditid"}, admin)
            if a["auditid"] not in seen and a["username"].startswith("au-")]
    for a in recs:
        seen.add(a["auditid"])
    steps.append({"answer": answer, "records": recs})
clean()
json.dump({"saved": saved, "steps": steps}, sys.stdout, indent=1, sort_keys=True)
print()
