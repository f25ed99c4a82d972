#!/usr/bin/env bash
# A user who never downloads compiles no HTTP or TLS stack: the products
# MediaMuxCore and MediaMuxPreview, with every target they reach, depend on
# no product of async-http-client, swift-nio-ssl or swift-crypto, nor on
# NIOHTTP1. Read from `swift package describe`, so a dependency added to a
# core target in Package.swift fails here, not in a user's build.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build
swift package describe --type json > .build/describe.json
python3 - .build/describe.json <<'PY'
import json, sys
package = json.load(open(sys.argv[1]))
targets = {t["name"]: t for t in package["targets"]}
products = {p["name"]: p["targets"] for p in package["products"]}
heavy = {"AsyncHTTPClient", "NIOSSL", "Crypto", "_CryptoExtras", "NIOHTTP1", "NIOHTTP2", "NIOTLS"}
failed = False
for product in ("MediaMuxCore", "MediaMuxPreview"):
    seen, todo, outside = set(), list(products[product]), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += targets[name].get("target_dependencies", [])
        outside |= set(targets[name].get("product_dependencies", []))
    found = sorted(outside & heavy)
    if found:
        print(f"products: {product} reaches {', '.join(found)} (through its targets {', '.join(sorted(seen))})", file=sys.stderr)
        failed = True
    else:
        print(f"products: {product}: targets {', '.join(sorted(seen))}; packages' products {', '.join(sorted(outside))}")
sys.exit(1 if failed else 0)
PY
