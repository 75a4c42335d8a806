"""Zabbix's official Python library zabbix_utils against Peregrine.

Usage: zabbix_utils_flow.py URL ADMIN_PASSWORD TRAPPER_PORT

The library's own flows, unchanged: ZabbixAPI (version check, login with
username, every call with a UUID id, check_auth, logout), an API token
login, and Sender (send_value and send of several values, with and
without clock). Prints "OK ..." as its last line when everything held.
"""
import sys
import time

from zabbix_utils import ZabbixAPI, Sender, ItemValue

url, password, port = sys.argv[1], sys.argv[2], int(sys.argv[3])

api = ZabbixAPI(url=url)
assert str(api.version) == "6.0.14", api.version
api.login(user="Admin", password=password)
assert api.check_auth(), "check_auth after login"

group = api.hostgroup.create(name="zu-group")["groupids"][0]
host = api.host.create(host="zu-host", groups=[{"groupid": group}])["hostids"][0]
items = api.item.create([
    {"hostid": host, "name": "Temperature", "key_": "zu.temp", "type": 2, "value_type": 0},
    {"hostid": host, "name": "Count", "key_": "zu.count", "type": 2, "value_type": 3},
])["itemids"]
found = api.host.get(output=["hostid", "name"], filter={"host": ["zu-host"]})
assert found == [{"hostid": host, "name": "zu-host"}], found

sender = Sender(server="127.0.0.1", port=port)
r = sender.send_value("zu-host", "zu.temp", "21.5", int(time.time()) - 60)
assert (r.processed, r.failed, r.total) == (1, 0, 1), r
r = sender.send([
    ItemValue("zu-host", "zu.temp", "22"),
    ItemValue("zu-host", "zu.count", "7"),
    ItemValue("zu-host", "zu.nosuch", "1"),
    ItemValue("zu-host", "zu.count", "not a number"),
])
# The value that does not convert is processed, as Zabbix 6.0 counts it,
# and makes the item not supported.
assert (r.processed, r.failed, r.total) == (3, 1, 4), r

hist = api.history.get(history=0, itemids=[items[0]], sortfield="clock", sortorder="ASC", output="extend")
assert [h["value"] for h in hist] == ["21.5", "22"], hist
state = api.item.get(itemids=[items[1]], output=["state", "error", "lastvalue"])
assert state[0]["state"] == "1" and "not suitable" in state[0]["error"] and state[0]["lastvalue"] == "7", state

token_id = api.token.create(name="zu-token", userid="1")["tokenids"][0]
token = api.token.generate(token_id)[0]["token"]
tapi = ZabbixAPI(url=url)
tapi.login(token=token)
assert tapi.check_auth(), "check_auth with a token"
assert tapi.host.get(output=["host"], hostids=[host]) == [{"hostid": host, "host": "zu-host"}]
api.token.delete(token_id)

api.host.delete(host)
api.hostgroup.delete(group)
api.logout()
assert not api.check_auth(), "check_auth after logout"
print("OK zabbix_utils: API, token and Sender flows")
