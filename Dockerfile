# pkgtool in a container, from the release archive (scripts/release.sh), on the Debian the archive
# is built and tested on (scripts/release-test.sh runs the same install in a bookworm root made
# with mmdebstrap). Docker is not run by the tests: this file is labelled untested (docs/ci.md).
#   scripts/release.sh                      # -> dist/pkgtool-VERSION-linux-ARCH.tar.gz
#   docker build --build-arg PKGTOOL_ARCHIVE=dist/pkgtool-0.1.0-linux-x86_64.tar.gz -t pkgtool .
#   docker run --rm -v "$PWD:/work" pkgtool validate dist/MyBook.pkg
FROM debian:bookworm-slim
ARG PKGTOOL_ARCHIVE=dist/pkgtool-0.1.0-linux-x86_64.tar.gz
# The packages the archive's INSTALL names (scripts/release-test.sh checks this line matches).
RUN apt-get update && apt-get install -y --no-install-recommends libarchive13 libc6 libdeflate0 libgcc-s1 libstdc++6 libxml2 zlib1g \
  && rm -rf /var/lib/apt/lists/*
COPY ${PKGTOOL_ARCHIVE} /tmp/pkgtool.tar.gz
RUN tar -xzf /tmp/pkgtool.tar.gz -C /usr/local --strip-components=1 --no-overwrite-dir --exclude=INSTALL \
  && rm /tmp/pkgtool.tar.gz && pkgtool --version
WORKDIR /work
ENTRYPOINT ["pkgtool"]
