"""A Zabbix API user's script, run by TestIntegrationPyzabbix against a
Peregrine server with Debian's python3-pyzabbix (0.8.2) and the real
zabbix_sender.

It logs in the way pyzabbix does (the old "user" parameter and the "auth"
member), creates a host group, a host and trapper items, pushes values
with zabbix_sender, reads them back with history.get and trend.get, and
then makes the calls Grafana's Zabbix datasource makes, checking each
answer has the shape Grafana reads. Any failed check raises; the Go test
only looks at the exit status and the last line ("OK ...").

usage: pyzabbix_flow.py API_URL PASSWORD ZABBIX_SENDER TRAPPER_PORT
"""

import subprocess
import sys
import tempfile
import time

from pyzabbix import ZabbixAPI, ZabbixAPIException

url, password, sender, port = sys.argv[1:5]


def check(cond, what):
    if not cond:
        raise AssertionError(what)


z = ZabbixAPI(url, timeout=30)
check(z.api_version() == "6.0.14", "apiinfo.version")
try:
    z.login("Admin", "not-the-password")
    raise AssertionError("login with a wrong password succeeded")
except ZabbixAPIException as e:
    check("Incorrect user name or password" in str(e), "wrong password error: %s" % e)
z.login("Admin", password)
check(z.is_authenticated, "user.checkAuthentication after login")

# Configuration through the API.
gid = z.hostgroup.create(name="Pyzabbix group")["groupids"][0]
hid = z.host.create(
    host="py-host",
    name="Python host",
    groups=[{"groupid": gid}],
    interfaces=[{"type": 1, "main": 1, "useip": 1, "ip": "127.0.0.1", "dns": "", "port": "10050"}],
)["hostids"][0]
ids = z.item.create(
    {"hostid": hid, "name": "CPU load", "key_": "py.load", "type": 2, "value_type": 0, "units": "%"},
    {"hostid": hid, "name": "Requests", "key_": "py.requests", "type": 2, "value_type": 3},
    {"hostid": hid, "name": "Version", "key_": "py.version", "type": 2, "value_type": 1},
)["itemids"]
check(len(ids) == 3, "item.create ids: %s" % ids)
load_id, req_id, ver_id = ids
try:
    z.item.create(hostid=hid, name="dup", key_="py.load", type=2, value_type=0)
    raise AssertionError("duplicate key accepted")
except ZabbixAPIException as e:
    check("py.load" in str(e), "duplicate key error names the key: %s" % e)

# Values through the real zabbix_sender, with timestamps in two whole hours
# so that trend.get has two rows per numeric item.
base = (int(time.time()) // 3600 - 3) * 3600
lines = []
for i in range(120):
    clock = base + i * 60  # two hours, one value a minute
    lines.append("py-host py.load %d %.2f" % (clock, i / 10))
    lines.append("py-host py.requests %d %d" % (clock, i * 3))
lines.append("py-host py.version %d peregrine-1.0" % base)
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    f.write("\n".join(lines) + "\n")
out = subprocess.run(
    [sender, "-z", "127.0.0.1", "-p", port, "-T", "-i", f.name],
    capture_output=True, text=True, timeout=60,
)
check(out.returncode == 0, "zabbix_sender exit %d: %s %s" % (out.returncode, out.stdout, out.stderr))
check("processed: 241" in out.stdout or "sent: 241" in out.stdout, "zabbix_sender: %s" % out.stdout)

# history.get, as a script reads it.
h = z.history.get(itemids=load_id, history=0, sortfield="clock", sortorder="ASC",
                  time_from=base, time_till=base + 7200)
check(len(h) == 120, "history.get float rows: %d" % len(h))
check(h[0] == {"itemid": load_id, "clock": str(base), "value": "0", "ns": "0"}, "first row: %s" % h[0])
check(h[-1]["value"] == "11.9", "last value: %s" % h[-1])
h = z.history.get(itemids=[req_id], history=3, sortfield="clock", sortorder="DESC", limit=5)
check([r["value"] for r in h] == ["357", "354", "351", "348", "345"], "uint DESC limit: %s" % h)
h = z.history.get(itemids=ver_id, history=1)
check(len(h) == 1 and h[0]["value"] == "peregrine-1.0", "char history: %s" % h)
check(z.history.get(itemids=load_id, history=0, countOutput=True) == "120", "countOutput")

# trend.get: two hours, min/avg/max per hour.
t = z.trend.get(itemids=[load_id], time_from=base, time_till=base + 7200)
check(len(t) == 2, "trend.get rows: %s" % t)
check(t[0]["clock"] == str(base) and t[0]["num"] == "60", "trend hour 1: %s" % t[0])
check(float(t[0]["value_min"]) == 0 and abs(float(t[0]["value_max"]) - 5.9) < 1e-9, "trend min/max: %s" % t[0])
check(abs(float(t[0]["value_avg"]) - 2.95) < 1e-9, "trend avg: %s" % t[0])

# Grafana's Zabbix datasource: the calls of its "metrics" query editor and
# panel refresh, with the parameters it sends.
groups = z.hostgroup.get(output=["name", "groupid"], sortfield="name", with_hosts=True)
check({"groupid": gid, "name": "Pyzabbix group"} in groups, "hostgroup.get with_hosts: %s" % groups)
hosts = z.host.get(output=["hostid", "name", "host"], sortfield="name", groupids=[gid])
check(hosts == [{"hostid": hid, "name": "Python host", "host": "py-host"}], "host.get by group: %s" % hosts)
items = z.item.get(
    output=["itemid", "name", "key_", "value_type", "hostid", "status", "state", "units", "valuemapid", "delay"],
    sortfield="name", webitems=True, filter={"value_type": [0, 3]},
    selectHosts=["hostid", "name", "host"], hostids=[hid],
)
check([i["key_"] for i in items] == ["py.load", "py.requests"], "numeric item.get: %s" % items)
check(items[0]["value_type"] == "0" and items[0]["units"] == "%" and items[0]["hosts"][0]["hostid"] == hid,
      "item.get fields: %s" % items[0])
now = base + 7200
for vt, iid in (("0", load_id), ("3", req_id)):
    rows = z.history.get(output="extend", history=vt, itemids=[iid], sortfield="clock", sortorder="ASC",
                         time_from=base, time_till=now)
    clocks = [int(r["clock"]) for r in rows]
    check(len(rows) == 120 and clocks == sorted(clocks), "grafana history.get vt %s" % vt)
tr = z.trend.get(output=["itemid", "clock", "value_avg"], itemids=[load_id], time_from=base, time_till=now)
check(len(tr) == 2 and set(tr[0]) == {"itemid", "clock", "value_avg"}, "grafana trend.get: %s" % tr)

# A passive agent item: without interfaceid it takes the host's main agent
# interface; host.get and hostinterface.get show the interface with its
# availability (0, unknown: nothing has checked it in this flow).
iface = z.hostinterface.get(hostids=hid, output="extend")
check(len(iface) == 1 and iface[0]["ip"] == "127.0.0.1" and iface[0]["available"] == "0",
      "hostinterface.get: %s" % iface)
# An agent item names its interface, as Zabbix 6.0 requires.
agent_id = z.item.create(hostid=hid, name="Agent ping", key_="agent.ping", type=0, value_type=4,
                         interfaceid=iface[0]["interfaceid"], delay="1m;30s/1-5,09:00-18:00", timeout="5s")["itemids"][0]
ai = z.item.get(itemids=agent_id, output=["interfaceid", "timeout", "state", "error", "delay"])[0]
# Zabbix 6.0 returns the object's id with any output list.
check(ai == {"itemid": agent_id, "interfaceid": iface[0]["interfaceid"], "timeout": "5s", "state": "0", "error": "",
             "delay": "1m;30s/1-5,09:00-18:00"}, "agent item.get: %s" % ai)
hi = z.host.get(hostids=hid, output=["hostid"], selectInterfaces=["interfaceid", "available", "error"])
check(hi[0]["interfaces"] == [{"interfaceid": iface[0]["interfaceid"], "available": "0", "error": ""}],
      "host.get selectInterfaces: %s" % hi)
try:
    z.host.update(hostid=hid, interfaces=[{"type": 1, "main": 1, "useip": 1, "ip": "127.0.0.2", "dns": "", "port": "10050"}])
    raise AssertionError("deleting the interface of an agent item accepted")
except ZabbixAPIException as e:
    check("Interface is linked to item" in str(e), "interface in use: %s" % e)
z.item.delete(agent_id)

# preprocessing.test (the frontend's "Test" button, Peregrine's API method):
# a JSONPath function then a multiplier, with Zabbix's per-step answer.
r = z.preprocessing.test(value='{"a": [1, 2, 3]}', value_type="0", steps=[
    {"type": "12", "params": "$.a.sum()", "error_handler": "0", "error_handler_params": ""},
    {"type": "1", "params": "10", "error_handler": "0", "error_handler_params": ""}])
check(r == {"steps": [{"result": "6"}, {"result": "60"}], "result": "60"}, "preprocessing.test: %s" % r)
try:
    z.preprocessing.test(value="1", value_type="0", steps=[{"type": "5", "params": "a"}])
    raise AssertionError("a regular expression step without output accepted")
except ZabbixAPIException as e:
    check('the parameter "2" is missing' in str(e), "preprocessing.test params error: %s" % e)

# A dependent item with a preprocessing step, read back as Zabbix 6.0
# returns it (selectPreprocessing, every member a string).
step = {"type": "1", "params": "2", "error_handler": "0", "error_handler_params": ""}
dep_id = z.item.create(hostid=hid, name="Requests doubled", key_="py.requests.x2", type=18, value_type=3,
                       master_itemid=req_id, preprocessing=[step])["itemids"][0]
d = z.item.get(itemids=dep_id, output=["master_itemid", "type"], selectPreprocessing="extend")[0]
check(d == {"itemid": dep_id, "master_itemid": req_id, "type": "18", "preprocessing": [step]}, "dependent item.get: %s" % d)
try:
    z.item.create(hostid=hid, name="orphan", key_="py.orphan", type=18, value_type=3)
    raise AssertionError("a dependent item without master accepted")
except ZabbixAPIException as e:
    check('"master_itemid" is missing' in str(e), "dependent item error: %s" % e)
z.item.delete(dep_id)

# Updates and deletes reach the running server.
z.item.update(itemid=ver_id, status=1)
check(z.item.get(itemids=ver_id, output=["status"])[0]["status"] == "1", "item.update status")
z.item.delete(ver_id)
check(z.item.get(itemids=ver_id) == [], "item.delete")
z.user.logout()
check(not z.is_authenticated, "session after logout")
print("OK groups=%d hosts=%d items=%d history=120 trends=%d" % (len(groups), len(hosts), len(items), len(t)))
