# muxctl in a container: built with Swift, run on a slim Debian with only
# FFmpeg's runtime libraries (deploy/image/runtime-packages-DEBIAN.txt).
# DEBIAN chooses the release, and with it the FFmpeg: bookworm (Debian 12,
# FFmpeg 5.1, the default) or trixie (Debian 13, FFmpeg 7.1).
#
#   docker build -t muxctl:0.1.0 .
#   docker build --build-arg DEBIAN=trixie -t muxctl:0.1.0-trixie .
#   docker run --rm -v "$PWD:/work" -w /work muxctl:0.1.0 batch jobs.json --jobs 2 --report report
#
# The build stage runs deploy/image/build-root.sh, which CI also runs outside
# Docker (no daemon there), testing the same binary and install steps; CI
# checks the trixie package list against its Debian 13 root
# (deploy/image/check-libraries.sh).

ARG DEBIAN=bookworm
ARG SWIFT_VERSION=6.3.1

# Debian 12: Swift's own image.
FROM swift:6.3-bookworm AS build-bookworm

# Debian 13: Swift's Debian 12 toolchain, which runs there with these
# libraries (as in CI's Debian 13 root), checked against swift.org's key.
FROM debian:trixie AS build-trixie
ARG SWIFT_VERSION
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates curl gnupg binutils gcc libc6-dev libstdc++-14-dev zlib1g-dev git make pkg-config \
      libncurses6 libxml2 libcurl4t64 libedit2 libsqlite3-0 tzdata \
 && url="https://download.swift.org/swift-${SWIFT_VERSION}-release/debian12/swift-${SWIFT_VERSION}-RELEASE/swift-${SWIFT_VERSION}-RELEASE-debian12.tar.gz" \
 && curl -fsSL "$url" -o /tmp/swift.tar.gz && curl -fsSL "$url.sig" -o /tmp/swift.tar.gz.sig \
 && export GNUPGHOME="$(mktemp -d)" \
 && curl -fsSL https://swift.org/keys/all-keys.asc | gpg --batch --import \
 && gpg --batch --verify /tmp/swift.tar.gz.sig /tmp/swift.tar.gz \
 && tar -xzf /tmp/swift.tar.gz -C / --strip-components=1 \
 && rm -rf "$GNUPGHOME" /tmp/swift.tar.gz* /var/lib/apt/lists/*

FROM build-${DEBIAN} AS build
WORKDIR /src
COPY . .
RUN bash deploy/image/build-root.sh /staging

FROM debian:${DEBIAN}-slim
ARG DEBIAN
COPY deploy/image/runtime-packages-${DEBIAN}.txt /tmp/runtime-packages.txt
RUN apt-get update \
 && apt-get install -y --no-install-recommends $(sed -e 's/#.*//' /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && useradd --uid 10001 --create-home muxctl
COPY --from=build /staging/usr/local/ /usr/local/
USER muxctl
ENTRYPOINT ["muxctl"]
CMD ["--help"]
