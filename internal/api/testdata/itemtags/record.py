#!/usr/bin/env python3
# Records the item tag scenario of TestItemTagsGolden from a running
# Zabbix 6.0 (the peer: ../shared/peers/zabbix/setup.sh) into
# itemtags.jsonl beside this file:
#
#   python3 record.py [API URL] [trapper port] [server config]
#
# defaults http://127.0.0.1:10088/api_jsonrpc.php, 10061,
# /tmp/zbxpeer/zabbix_server.conf; the peer's database is read with psql
# (PGHOST, PGPORT; default /tmp/zbxpeer/sock, 55432). It logs in as Admin/zabbix and creates
# a host group "it-group" with the hosts "it-host" and "it-host2", their
# items and triggers; values are sent with zabbix_sender after a
# configuration cache reload (zabbix_server -R config_cache_reload).
# Everything it creates is deleted at the end (and before it starts, if
# an earlier run left it).
#
# Each line of the output is one step: {"method","params","answer"}
# ("db:event_tag": the trigger events' tags as rows of the database in
# the order they were made, per event: the API gives them in the order
# of the database's plan), or
# {"fire":{"host","key","value"},"triggers":[...]} for a value sent to
# the trapper, which makes the listed triggers' problems. "$name" in
# params is the ID bound to name by an earlier step's "bind" (the IDs its
# answer returns, in order); IDs in answers are written as "@name@", or
# "*" for IDs no step bound (event IDs).
import json, os, subprocess, sys, time, urllib.request

U = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:10088/api_jsonrpc.php"
PORT = sys.argv[2] if len(sys.argv) > 2 else "10061"
CONF = sys.argv[3] if len(sys.argv) > 3 else "/tmp/zbxpeer/zabbix_server.conf"
PGHOST = os.environ.get("PGHOST", "/tmp/zbxpeer/sock")
PGPORT = os.environ.get("PGPORT", "55432")
HERE = os.path.dirname(os.path.abspath(__file__))
_tok = []

def raw(method, params, auth=None):
    body = {"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
    if auth:
        body["auth"] = auth
    req = urllib.request.Request(U, data=json.dumps(body).encode(), headers={"Content-Type": "application/json-rpc"})
    return json.load(urllib.request.urlopen(req))

def login():
    if not _tok:
        _tok.append(raw("user.login", {"username": "Admin", "password": "zabbix"})["result"])
    return _tok[0]

def call(method, params):
    return raw(method, params, login())["result"]

def cleanup():
    hs = call("host.get", {"output": ["hostid"], "filter": {"host": ["it-host", "it-host2"]}})
    if hs:
        call("host.delete", [h["hostid"] for h in hs])
    gs = call("hostgroup.get", {"output": ["groupid"], "filter": {"name": ["it-group"]}})
    if gs:
        call("hostgroup.delete", [g["groupid"] for g in gs])

TAGS1 = [{"tag": "itag", "value": "iv"}, {"tag": "dup", "value": "same"}, {"tag": "Component", "value": "CPU"}, {"tag": "novalue"}]
LONG = "t" * 256

# Steps: (bind, method, params) or ("fire", {...}, [triggers]).
STEPS = [
    ("gid", "hostgroup.create", {"name": "it-group"}),
    ("h1", "host.create", {"host": "it-host", "groups": [{"groupid": "$gid"}], "tags": [{"tag": "htag", "value": "hv"}, {"tag": "dup", "value": "same"}]}),
    ("h2", "host.create", {"host": "it-host2", "groups": [{"groupid": "$gid"}], "tags": [
        {"tag": "h2tag", "value": "x"}, {"tag": "itag", "value": "iv"}, {"tag": "{HOST.HOST}n", "value": "{HOST.NAME} {ITEM.VALUE}"}]}),
    ("m1", "usermacro.create", {"hostid": "$h1", "macro": "{$ITGM}", "value": "mv"}),
    ("i1", "item.create", {"hostid": "$h1", "name": "it trap", "key_": "it.trap", "type": 2, "value_type": 3, "tags": TAGS1}),
    ("i2", "item.create", {"hostid": "$h1", "name": "it trap2", "key_": "it.trap2", "type": 2, "value_type": 3,
                           "tags": [{"tag": "itag", "value": "other"}, {"tag": "Component", "value": "Memory"}]}),
    ("i3", "item.create", {"hostid": "$h1", "name": "it trap3", "key_": "it.trap3", "type": 2, "value_type": 3, "tags": [{"tag": "t3", "value": "1"}]}),
    ("i4", "item.create", {"hostid": "$h2", "name": "it b", "key_": "it.b", "type": 2, "value_type": 3,
                           "tags": [{"tag": "btag", "value": "b1"}, {"tag": "htag", "value": "hv"}]}),
    ("i5", "item.create", {"hostid": "$h1", "name": "it m", "key_": "it.m", "type": 2, "value_type": 3, "tags": [
        {"tag": "hn", "value": "{HOST.NAME}"}, {"tag": "um", "value": "{$ITGM}"}, {"tag": "iv", "value": "{ITEM.VALUE}"},
        {"tag": "ik", "value": "{ITEM.KEY}"}, {"tag": "{HOST.HOST}", "value": "x"}]}),
    ("i6", "item.create", {"hostid": "$h1", "name": "it plain", "key_": "it.plain", "type": 2, "value_type": 3}),
    ("t1,t2,t3,t4,t5,t6", "trigger.create", [
        {"description": "it trig1", "expression": "last(/it-host/it.trap)>5", "priority": 3,
         "tags": [{"tag": "ttag", "value": "tv"}, {"tag": "dup", "value": "same"}, {"tag": "Component", "value": "Trig"}]},
        {"description": "it trig2", "expression": "last(/it-host/it.trap)>100 or last(/it-host/it.trap2)>100"},
        {"description": "it trig3", "expression": "last(/it-host2/it.b)>100 or last(/it-host/it.trap)>1000"},
        {"description": "it trig4", "expression": "last(/it-host2/it.b)>100",
         "tags": [{"tag": "btag", "value": "b1"}, {"tag": "v", "value": "{ITEM.VALUE}"}, {"tag": "{HOST.NAME}-{ITEM.VALUE}", "value": "y"}]},
        {"description": "it trig5", "expression": "last(/it-host/it.trap3)>5", "recovery_mode": 1,
         "recovery_expression": "last(/it-host2/it.b)<0", "tags": [{"tag": "t5", "value": "x"}]},
        {"description": "it trig6", "expression": "last(/it-host/it.m)>5"},
    ]),
    ("fire", {"host": "it-host", "key": "it.trap", "value": "2000"}, ["$t1", "$t2", "$t3"]),
    ("fire", {"host": "it-host2", "key": "it.b", "value": "300"}, ["$t4"]),
    ("fire", {"host": "it-host", "key": "it.trap3", "value": "10"}, ["$t5"]),
    ("fire", {"host": "it-host", "key": "it.m", "value": "10"}, ["$t6"]),
    ("", "problem.get", {"hostids": ["$h1", "$h2"], "output": ["name", "objectid"], "selectTags": "extend", "sortfield": ["eventid"]}),
    ("fire", {"host": "it-host", "key": "it.trap", "value": "1"}, ["-$t1"]),
    ("", "event.get", {"objectids": ["$t1"], "output": ["name", "value"], "selectTags": "extend", "sortfield": ["eventid"]}),
    # The order the tags were made in: the API's order is the database's
    # (an index scan returns them sorted), so read the rows by their IDs.
    ("", "db:event_tag", ["$t1", "$t2", "$t3", "$t4", "$t5", "$t6"]),
    ("", "problem.get", {"hostids": ["$h1", "$h2"], "output": ["name"], "tags": [{"tag": "Component", "value": "CPU", "operator": 1}], "sortfield": ["eventid"]}),
    ("", "problem.get", {"hostids": ["$h1", "$h2"], "output": ["name"], "tags": [{"tag": "h2tag", "operator": 4}], "sortfield": ["eventid"]}),

    # item.get: selectTags in every form, the tag filter.
    ("", "item.get", {"hostids": "$h1", "output": ["itemid", "key_"], "selectTags": "extend", "sortfield": "itemid"}),
    ("", "item.get", {"hostids": "$h1", "output": ["itemid"], "selectTags": "count", "sortfield": "itemid"}),
    ("", "item.get", {"hostids": "$h1", "output": ["itemid"], "selectTags": ["value"], "sortfield": "itemid"}),
    ("", "item.get", {"hostids": "$h1", "output": ["itemid"], "selectTags": ["tag", "value", "foo"], "sortfield": "itemid"}),
    ("", "item.get", {"hostids": "$h1", "output": ["itemid"], "selectTags": [], "sortfield": "itemid"}),
    ("", "item.get", {"hostids": "$h1", "output": ["itemid"], "selectTags": "foo", "sortfield": "itemid"}),
    ("", "item.get", {"hostids": "$h1", "output": ["itemid"], "selectTags": True, "sortfield": "itemid"}),
    ("", "item.get", {"hostids": "$h1", "output": ["itemid"], "selectTags": None, "sortfield": "itemid"}),
    ("", "item.get", {"itemids": ["$i1", "$i2"], "output": ["itemid"], "selectTags": "extend", "limitSelects": 1, "preservekeys": True}),
    ("", "item.get", {"hostids": "$h1", "output": "extend", "selectTags": "extend", "countOutput": True}),
    # Grafana's item tag filter.
    ("", "item.get", {"output": ["name", "key_", "value_type", "hostid", "status"], "hostids": ["$h1", "$h2"], "webitems": True,
                      "filter": {"value_type": [0, 3]}, "selectHosts": ["hostid", "name"], "selectTags": "extend",
                      "tags": [{"tag": "Component", "value": "CPU", "operator": "1"}], "evaltype": 2}),
]
for case in [
    {"tags": [{"tag": "itag", "value": "iv", "operator": "1"}], "evaltype": 2},
    {"tags": [{"tag": "itag", "value": "I", "operator": 0}]},
    {"tags": [{"tag": "itag", "value": "iv", "operator": 2}]},
    {"tags": [{"tag": "itag", "value": "iv", "operator": 3}]},
    {"tags": [{"tag": "Component", "operator": 4}]},
    {"tags": [{"tag": "Component", "operator": 5}]},
    {"tags": [{"tag": "itag", "value": "iv", "operator": 1}, {"tag": "Component", "value": "Memory", "operator": 1}], "evaltype": 0},
    {"tags": [{"tag": "itag", "value": "iv", "operator": 1}, {"tag": "Component", "value": "Memory", "operator": 1}], "evaltype": 2},
    {"tags": [{"tag": "itag", "value": "iv", "operator": 1}, {"tag": "itag", "value": "other", "operator": 1}], "evaltype": 0},
    {"tags": [{"tag": "htag"}]},
    {"tags": [{"tag": "itag"}]},
    {"tags": [{"tag": "novalue", "value": "", "operator": 1}]},
    {"tags": [{"tag": "itag", "value": "x", "operator": 7}]},
    {"tags": [{"tag": "itag", "value": "OTHER", "operator": 0}, {"tag": "t3", "operator": 4}], "evaltype": "2"},
    {"tags": []},
    {"tags": None},
    {"tags": [{"tag": "itag", "value": "iv", "operator": 1}], "evaltype": 1},
    {"tags": [{"tag": "itag", "value": "iv", "operator": 1}], "countOutput": True},
]:
    p = {"hostids": ["$h1", "$h2"], "output": ["itemid"], "sortfield": "itemid"}
    p.update(case)
    if "countOutput" in case:
        del p["sortfield"]  # 6.0 answers [] to countOutput with sortfield
    STEPS.append(("", "item.get", p))

STEPS += [
    # item.update replaces the tags: kept ones keep their place, new ones
    # follow in natural order.
    ("", "item.update", {"itemid": "$i2", "tags": [{"tag": "new", "value": "1"}, {"tag": "Component", "value": "Memory"}, {"tag": "a", "value": "z"}]}),
    ("", "item.get", {"itemids": "$i2", "output": ["itemid"], "selectTags": "extend"}),
    ("", "item.update", {"itemid": "$i2", "name": "it trap2 renamed"}),
    ("", "item.get", {"itemids": "$i2", "output": ["name"], "selectTags": "extend"}),
    ("", "item.update", {"itemid": "$i3", "tags": [{"tag": "a", "value": "1"}, {"tag": "B", "value": "2"}, {"tag": "x10", "value": "3"},
                                                   {"tag": "x9", "value": "1"}, {"tag": "b", "value": "10"}, {"tag": "b", "value": "9"},
                                                   {"tag": "b", "value": "B"}, {"tag": "_", "value": ""}, {"tag": "x 2", "value": ""},
                                                   {"tag": "x01", "value": ""}, {"tag": "t3", "value": "1"}]}),
    ("", "item.get", {"itemids": "$i3", "output": ["itemid"], "selectTags": "extend"}),
    ("", "item.update", {"itemid": "$i3", "tags": []}),
    ("", "item.get", {"itemids": "$i3", "output": ["itemid"], "selectTags": "extend"}),
    ("", "item.update", [{"itemid": "$i6", "tags": [{"tag": "z", "value": "1"}, {"tag": "y", "value": "1"}]},
                         {"itemid": "$i3", "tags": [{"tag": "k", "value": "v"}]}]),
    ("", "item.get", {"itemids": ["$i6", "$i3"], "output": ["itemid"], "selectTags": "extend", "sortfield": "itemid"}),
]
# Refused tags, on create and on update.
for tags in [
    [{"tag": "a", "value": "1"}, {"tag": "a", "value": "1"}],
    [{"tag": "", "value": "1"}],
    [{"value": "1"}],
    [{"tag": "a", "value": None}],
    [{"tag": "a", "foo": "x"}],
    {"tag": "a"},
    "a",
    None,
    [{"tag": LONG}],
    [{"tag": "a", "value": LONG}],
    [{"tag": "é" * 255, "value": "é" * 255}, {"tag": 1, "value": 2}],
    [["a"]],
    ["a"],
    [[]],
]:
    STEPS.append(("", "item.create", {"hostid": "$h1", "name": "it e", "key_": "it.e", "type": 2, "value_type": 3, "tags": tags}))
    STEPS.append(("", "item.update", {"itemid": "$i6", "tags": tags}))
STEPS.append(("", "item.get", {"itemids": "$i6", "output": ["itemid"], "selectTags": "extend"}))
# An object is a list of its members' values.
STEPS.append(("", "item.update", {"itemid": "$i6", "tags": {"x": {"tag": "ob", "value": "1"}, "y": {"tag": "y", "value": "1"}}}))
STEPS.append(("", "item.get", {"itemids": "$i6", "output": ["itemid"], "selectTags": "extend"}))

def main():
    cleanup()
    binds = {}
    rev = {}
    def subst(v):
        if isinstance(v, str) and v.startswith("$") and v[1:] in binds:
            return binds[v[1:]]
        if isinstance(v, list):
            return [subst(x) for x in v]
        if isinstance(v, dict):
            return {k: subst(x) for k, x in v.items()}
        return v
    def idkey(k):
        return k.endswith("id") or k.endswith("ids")
    def norm(v, k=""):
        if isinstance(v, dict):
            return {(rev.get(kk, kk) if k == "" and kk.isdigit() else kk): norm(x, kk) for kk, x in v.items()}
        if isinstance(v, list):
            return [norm(x, k) for x in v]
        if isinstance(v, str) and idkey(k) and v.isdigit() and v != "0":
            return rev.get(v, "*")
        return v
    out = []
    reloaded = False
    try:
        for bind, method, params in STEPS:
            if bind == "fire":
                if not reloaded:
                    subprocess.run(["zabbix_server", "-c", CONF, "-R", "config_cache_reload"], check=True, capture_output=True)
                    time.sleep(5)
                    reloaded = True
                subprocess.run(["zabbix_sender", "-z", "127.0.0.1", "-p", PORT, "-s", method["host"], "-k", method["key"], "-o", method["value"]],
                               check=True, capture_output=True)
                time.sleep(3)
                out.append({"fire": method, "triggers": params})
                continue
            if method == "db:event_tag":
                ids = ",".join(str(int(x)) for x in subst(params))
                rows = subprocess.run(["psql", "-h", PGHOST, "-p", PGPORT, "-U", "zabbix", "zabbix", "-AtF", "\t", "-c",
                                       "SELECT e.objectid, e.value, t.tag, t.value FROM event_tag t JOIN events e USING (eventid) "
                                       "WHERE e.source = 0 AND e.object = 0 AND e.objectid IN (" + ids + ") ORDER BY e.eventid, t.eventtagid"],
                                      check=True, capture_output=True, text=True).stdout
                evs = []
                for line in rows.splitlines():
                    obj, val, tag, value = line.split("\t")
                    key = (rev[obj], val)
                    if not evs or evs[-1]["key"] != key:
                        evs.append({"key": key, "objectid": rev[obj], "value": val, "tags": []})
                    evs[-1]["tags"].append({"tag": tag, "value": value})
                for e in evs:
                    del e["key"]
                out.append({"method": method, "params": params, "answer": evs})
                continue
            r = raw(method, subst(params), login())
            ans = {"error": r["error"]} if "error" in r else r["result"]
            if bind and "result" in r:
                ids = next(iter(r["result"].values()))
                for name, v in zip(bind.split(","), ids):
                    binds[name] = v
                    rev[v] = "@" + name + "@"
            step = {"method": method, "params": params, "answer": norm(ans)}
            if bind:
                step["bind"] = bind
            out.append(step)
    finally:
        cleanup()
    with open(os.path.join(HERE, "itemtags.jsonl"), "w") as f:
        for s in out:
            f.write(json.dumps(s, ensure_ascii=False, separators=(",", ":")) + "\n")

main()
