-- wrk script: POST a small JSON body.
wrk.method = "POST"
wrk.body = '{"message":"Hello, World!","values":[1,2,3],"nested":{"ok":true}}'
wrk.headers["Content-Type"] = "application/json"
