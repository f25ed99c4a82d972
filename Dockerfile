# muxctl in a container: built with Swift on Debian 12, run on a slim Debian 12
# with only FFmpeg's runtime libraries (deploy/image/runtime-packages.txt).
#
#   docker build -t muxctl:0.1.0 .
#   docker run --rm -v "$PWD:/work" -w /work muxctl:0.1.0 batch jobs.json --jobs 2 --report report
#
# The build stage runs deploy/image/build-root.sh, which CI also runs outside
# Docker (no daemon there), testing the same binary and install steps.

ARG SWIFT_IMAGE=swift:6.3-bookworm
FROM ${SWIFT_IMAGE} AS build
WORKDIR /src
COPY . .
RUN bash deploy/image/build-root.sh /staging

FROM debian:bookworm-slim
COPY deploy/image/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update \
 && apt-get install -y --no-install-recommends $(sed -e 's/#.*//' /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && useradd --uid 10001 --create-home muxctl
COPY --from=build /staging/usr/local/ /usr/local/
USER muxctl
ENTRYPOINT ["muxctl"]
CMD ["--help"]
