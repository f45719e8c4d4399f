#!/usr/bin/env python3
"""Reads the Autobahn TestSuite's JSON reports (as kosoku writes them) and
checks them.

    autobahn_check.py DIR              every case passes (OK, NON-STRICT or
                                       INFORMATIONAL) and closes cleanly
    autobahn_check.py DIR --refusals   as above, except cases refused under
                                       the default limits: a message over
                                       them, closed cleanly with 1009

Prints `N passed, N refused, N failed` and exits non-zero on a failure.
"""

import glob
import json
import sys

PASSING = {"OK", "NON-STRICT", "INFORMATIONAL"}


def main():
    directory, refusals = sys.argv[1], "--refusals" in sys.argv[2:]
    reports = [json.load(open(path)) for path in glob.glob(f"{directory}/*_case_*.json")]
    if not reports:
        sys.exit(f"no reports in {directory}")
    passed, refused, failed = 0, 0, []
    for report in sorted(reports, key=lambda r: [int(part) for part in r["id"].split(".")]):
        clean = report["wasClean"]
        if report["behavior"] in PASSING and report["behaviorClose"] in PASSING and clean:
            passed += 1
        elif refusals and report["remoteCloseCode"] == 1009 and clean:
            refused += 1
        else:
            failed.append(report)
    for report in failed:
        print(f"FAIL {report['id']}: {report['description']} — {report['result']};"
              f" {report['resultClose']} (close code {report['remoteCloseCode']},"
              f" clean: {report['wasClean']})")
    print(f"{passed} passed, {refused} refused with 1009, {len(failed)} failed, of {len(reports)} cases")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
