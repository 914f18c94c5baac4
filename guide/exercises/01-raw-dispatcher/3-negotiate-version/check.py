"""initialize negotiates the version instead of echoing the client's."""
from probe import expect, ok, shown

SUPPORTED = ["2025-11-25", "2025-06-18"]


def agreed(server, version):
    answer = server.call("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "x"}})
    expect("result" in answer, f"initialize with {version!r} failed: {shown(answer.get('error'))}")
    return answer["result"].get("protocolVersion")


def check(server):
    answered = agreed(server, "2099-01-01")
    expect(answered == SUPPORTED[0],
           f"initialize with \"2099-01-01\" was answered with {shown(answered)}: a promise to follow rules this "
           f"server has never heard of. Answer {SUPPORTED[0]!r}, the newest version in SUPPORTED_VERSIONS")
    ok("an unknown version is answered with the newest supported one")

    for version in SUPPORTED:
        answered = agreed(server, version)
        expect(answered == version, f"initialize with {version!r}, a supported version, should get it back; "
                                    f"it got {shown(answered)}")
    ok(f"each supported version, {' and '.join(SUPPORTED)}, is agreed as asked")

    answer = server.call("initialize", {"capabilities": {}, "clientInfo": {"name": "x"}})
    expect("error" in answer or answer["result"].get("protocolVersion") in SUPPORTED,
           f"initialize without a protocolVersion got {shown(answer)}: answer a supported version (or an error), "
           f"never null")
    ok("an initialize without a version does not get null back")
