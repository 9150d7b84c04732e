#!/usr/bin/env bash
# Walks through everything the test OpenID Provider offers, with curl:
# discovery, JWKS, a user JWT (decoded and signature-checked), an opaque
# token + introspection, RFC 8693 token exchange, client_credentials, the
# error for an expired subject token, and the /test/stats counters.
#
#   bash tests/oidc/demo.sh            (needs: node, curl; run .ci/oidc.sh first)
#   NODE=/path/to/node bash tests/oidc/demo.sh
#
# Starts its own provider on an ephemeral loopback port and stops it on exit.
set -euo pipefail
cd "$(dirname "$0")"
NODE="${NODE:-node}"

# --- start the provider, read its one stdout line -------------------------
out="$(mktemp)"
"$NODE" provider.mjs --port 0 >"$out" 2>/dev/null &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do
  [[ -s "$out" ]] && break
  sleep 0.1
done
line="$(head -n1 "$out")"
[[ "$line" == listening\ http://127.0.0.1:* ]] || { echo "provider did not start: '$line'" >&2; exit 1; }
ISSUER="${line#listening }"
echo "== started: $line"

# --- helpers --------------------------------------------------------------
# js 'EXPR' : evaluate EXPR with `d` = the JSON document on stdin.
js() { "$NODE" -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const d=JSON.parse(s);const r=($1);console.log(typeof r==='string'?r:JSON.stringify(r,null,1))})"; }
# jwt TOKEN : print the decoded header and payload.
jwt() { "$NODE" -e "const [h,p]=process.argv[1].split('.').slice(0,2).map(x=>JSON.parse(Buffer.from(x,'base64url')));console.log('header ',JSON.stringify(h));console.log('payload',JSON.stringify(p,null,1))" "$1"; }
# verify TOKEN : check the signature against the provider's JWKS (as the gateway will).
verify() { "$NODE" --input-type=module -e "import * as jose from 'jose';const {payload,protectedHeader}=await jose.jwtVerify(process.argv[1],jose.createRemoteJWKSet(new URL('$ISSUER/jwks')),{issuer:'$ISSUER',typ:'at+jwt'});console.log('verified', protectedHeader.alg, 'kid='+protectedHeader.kid, 'aud='+payload.aud)" "$1"; }
TOKEN="$ISSUER/token"
PASSWORD_GRANT=urn:vmcp:test:password
TE_GRANT=urn:ietf:params:oauth:grant-type:token-exchange
AT_TYPE=urn:ietf:params:oauth:token-type:access_token

echo; echo "== 1. discovery ($ISSUER/.well-known/openid-configuration)"
curl -fsS "$ISSUER/.well-known/openid-configuration" \
  | js '({issuer:d.issuer, jwks_uri:d.jwks_uri, token_endpoint:d.token_endpoint, introspection_endpoint:d.introspection_endpoint, grant_types_supported:d.grant_types_supported})'

echo; echo "== 2. JWKS"
curl -fsS "$ISSUER/jwks" | js 'd.keys.map(k=>`${k.kid} kty=${k.kty} alg=${k.alg}${k.crv?" crv="+k.crv:""}`).join("\n")'

echo; echo "== 3. alice's user token (JWT, aud https://vmcp.test/mcp) via the password grant"
resp="$(curl -fsS "$TOKEN" -d grant_type=$PASSWORD_GRANT -d client_id=mcp-client -d username=alice)"
echo "$resp" | js '({...d, access_token: d.access_token.slice(0,24)+"..."})'
ALICE="$(echo "$resp" | js d.access_token)"
jwt "$ALICE"
verify "$ALICE"
for alg in ES256 EdDSA; do
  t="$(curl -fsS "$TOKEN" -d grant_type=$PASSWORD_GRANT -d client_id=mcp-client -d username=bob -d alg=$alg -d scope=mcp:read | js d.access_token)"
  verify "$t"
done

echo; echo "== 4. opaque token for https://opaque.vmcp.test, introspected by vmcp-gateway"
OPAQUE="$(curl -fsS "$TOKEN" -d grant_type=$PASSWORD_GRANT -d client_id=mcp-client -d username=bob \
  -d resource=https://opaque.vmcp.test -d scope='mcp:read mcp:write' | js d.access_token)"
echo "opaque token: $OPAQUE"
curl -fsS -u vmcp-gateway:gateway-secret "$ISSUER/token/introspection" -d token="$OPAQUE" | js d
echo "-- same, asked by backend-service (not allowed to introspect):"
curl -fsS -u backend-service:backend-secret "$ISSUER/token/introspection" -d token="$OPAQUE" | js d

echo; echo "== 5. token exchange: alice's token -> https://backend.vmcp.test (by vmcp-gateway)"
resp="$(curl -fsS -u vmcp-gateway:gateway-secret "$TOKEN" -d grant_type=$TE_GRANT \
  -d subject_token="$ALICE" -d subject_token_type=$AT_TYPE -d audience=https://backend.vmcp.test)"
echo "$resp" | js '({...d, access_token: d.access_token.slice(0,24)+"..."})'
EXCHANGED="$(echo "$resp" | js d.access_token)"
jwt "$EXCHANGED"
verify "$EXCHANGED"

echo; echo "== 6. client_credentials (backend-service -> https://backend.vmcp.test)"
resp="$(curl -fsS -u backend-service:backend-secret "$TOKEN" -d grant_type=client_credentials \
  -d resource=https://backend.vmcp.test -d scope=backend:read)"
echo "$resp" | js '({...d, access_token: d.access_token.slice(0,24)+"..."})'
jwt "$(echo "$resp" | js d.access_token)"

echo; echo "== 7. an expired subject token (ttl=1) is refused with invalid_grant"
SHORT="$(curl -fsS "$TOKEN" -d grant_type=$PASSWORD_GRANT -d client_id=mcp-client -d username=carol -d ttl=1 | js d.access_token)"
sleep 2
code="$(curl -sS -o /tmp/demo-te.$$ -w '%{http_code}' -u vmcp-gateway:gateway-secret "$TOKEN" -d grant_type=$TE_GRANT \
  -d subject_token="$SHORT" -d subject_token_type=$AT_TYPE -d audience=https://backend.vmcp.test)"
echo "HTTP $code $(cat /tmp/demo-te.$$)"; rm -f /tmp/demo-te.$$
[[ "$code" == 400 ]]

echo; echo "== 8. counters (GET /test/stats)"
curl -fsS "$ISSUER/test/stats" | js d

echo; echo "== demo: all steps passed"
