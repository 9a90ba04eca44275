# Chalk's layer on an image a repository's dev container gives (its `image`, or what its
# build.dockerfile built): the tools the sandbox scripts use, the proxy's CA, the claude CLI
# (its native binary, copied from the default sandbox image, so nothing is downloaded), Node's
# fetch through the proxy and the user. Any Debian- or Ubuntu-based image works. Chalk names
# the image chalk-sandbox:dc-<hash of this file, layer-packages.sh, both images' ids and the CA bundle>.
ARG CHALK_FROM
ARG CHALK_DEFAULT=chalk-sandbox:local
FROM ${CHALK_DEFAULT} AS chalk
USER root
RUN cp "$(readlink -f "$(command -v claude)")" /chalk-claude

FROM ${CHALK_FROM}
ARG CHALK_UID=10001
USER root
SHELL ["/bin/sh", "-eu", "-c"]
COPY chalk-ca.pem /etc/chalk/ca.pem
COPY layer-packages.sh /usr/local/lib/chalk/layer-packages.sh
RUN sh /usr/local/lib/chalk/layer-packages.sh
COPY --from=chalk /chalk-claude /usr/local/bin/claude
# Node's own fetch through the egress proxy, as in the default image, for an image that brings
# its own Node (before 24 it ignores HTTPS_PROXY): the preload and the undici it loads. The
# image's own NODE_OPTIONS is kept.
COPY --from=chalk /usr/local/lib/chalk/node-proxy.cjs /usr/local/lib/chalk/node-proxy.cjs
COPY --from=chalk /usr/local/lib/chalk/node_modules/undici /usr/local/lib/chalk/node_modules/undici
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    GIT_SSL_CAINFO=/etc/ssl/certs/ca-certificates.crt \
    DISABLE_AUTOUPDATER=1 \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    NODE_OPTIONS="--require=/usr/local/lib/chalk/node-proxy.cjs ${NODE_OPTIONS}" \
    NODE_USE_ENV_PROXY=1 \
    LANG=C.UTF-8
RUN claude --version >/dev/null \
 && { getent passwd "${CHALK_UID}" >/dev/null || useradd --no-create-home --home-dir /home/chalk --uid "${CHALK_UID}" --user-group --shell /bin/bash chalk; }
USER ${CHALK_UID}
ENV HOME=/home/chalk
ENTRYPOINT []
CMD ["sleep", "infinity"]
