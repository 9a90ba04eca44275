# A toolchain layered on the default sandbox image (chalk-sandbox:local): Debian packages
# only, named by CHALK_TOOLCHAIN (a fixed table, plugins/sandbox-docker/toolchain-packages.ts)
# and CHALK_SANDBOX_PACKAGES (checked to be package names). Chalk names the image
# chalk-sandbox:tc-<hash of this file, the base's id, the packages and the CA bundle>.
ARG CHALK_FROM=chalk-sandbox:local
FROM ${CHALK_FROM}
ARG CHALK_PACKAGES
USER root
SHELL ["/bin/sh", "-eu", "-c"]
# The proxy's CA for an https mirror (the base image's system bundle has it too).
COPY chalk-ca.pem /etc/chalk/ca.pem
RUN export DEBIAN_FRONTEND=noninteractive \
 && if [ -s /etc/chalk/ca.pem ]; then echo 'Acquire::https::CAInfo "/etc/chalk/ca.pem";' >/etc/apt/apt.conf.d/99chalk-ca; fi \
 && apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ${CHALK_PACKAGES} >/dev/null \
 && rm -rf /var/lib/apt/lists/* /etc/apt/apt.conf.d/99chalk-ca
USER chalk
